// A minimal JSON writer for the engine's results. Doubles are written with 17
// significant digits so that Python reads back exactly the engine's values.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace hopsim {

class JsonWriter {
public:
  JsonWriter& begin_object()
  {
    comma();
    out_ += '{';
    first_ = true;
    return *this;
  }
  JsonWriter& end_object()
  {
    out_ += '}';
    first_ = false;
    return *this;
  }
  JsonWriter& begin_array()
  {
    comma();
    out_ += '[';
    first_ = true;
    return *this;
  }
  JsonWriter& end_array()
  {
    out_ += ']';
    first_ = false;
    return *this;
  }
  JsonWriter& key(const std::string& k)
  {
    comma();
    string_literal(k);
    out_ += ':';
    first_ = true;  // the value that follows takes no comma
    return *this;
  }
  JsonWriter& value(double v)
  {
    comma();
    if (not std::isfinite(v)) {
      out_ += "null";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      out_ += buf;
    }
    return *this;
  }
  JsonWriter& value(int64_t v)
  {
    comma();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(const std::string& v)
  {
    comma();
    string_literal(v);
    return *this;
  }
  JsonWriter& null()
  {
    comma();
    out_ += "null";
    return *this;
  }
  template <class T> JsonWriter& array(const std::vector<T>& values)
  {
    begin_array();
    for (const T& v : values)
      value(v);
    return end_array();
  }
  const std::string& str() const { return out_; }

private:
  void comma()
  {
    if (not first_)
      out_ += ',';
    first_ = false;
  }
  void string_literal(const std::string& s)
  {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }
  std::string out_;
  bool first_ = true;
};

}  // namespace hopsim
