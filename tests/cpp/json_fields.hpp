// Numbers out of the engine's result JSON, for the closed-form tests: every value of a
// key, in the order the JSON lists them.
#pragma once

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

inline std::vector<double> fields(const std::string& json, const std::string& key)
{
  std::regex re("\"" + key + "\":(-?[0-9.eE+-]+)");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(json.begin(), json.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1]));
  if (out.empty())
    throw std::runtime_error("no field " + key + " in " + json);
  return out;
}
