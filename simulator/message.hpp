// A message between ranks, and the pool that recycles them: at scale millions of
// messages pass through, but only a few per rank are alive at any time.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace hopsim {

struct Message {
  int origin = 0;     // rank that created it
  int final_dst = 0;  // rank it is for
  int from = 0;       // sender of this hop
  int to = 0;         // receiver of this hop
  int64_t bytes = 0;
  int kind = 0;       // workload-defined (request, reply, ...)
  int hops = 0;       // transfers so far
  int64_t seq = 0;    // workload-defined (round trip, repetition, ...)
  double arrival = 0;
  // The staged path (docs/model.md: NIC stage, rendezvous, probe visibility).
  int phase = 0;           // what the transfer in flight carries: Phase in rank_loop.cpp
  double visible_at = 0;   // a probe can see it from this date
  double complete_at = 0;  // its last byte is at the rank from this date (once complete)
  double spread = 0;       // the time over which its bytes left the sender's NIC
  double rate = 0;         // bytes/s the transport may move it at, at most; 0: the links'
  uint64_t order = 0;      // the transfer's place among its connection's (rank pair, direction)
  double staged_at = 0;    // the transfer in flight was handed to the sender's NIC stage
  double started_at = 0;   // and the transport started moving it
  double arrived_at = 0;   // and finished (it may then wait for its connection's earlier ones)
  bool complete = true;    // all of it has arrived
  bool announced = false;  // put in the receiver's inbox (before or at completion)
  bool matched = false;    // rendezvous: the receiver took the request
  bool rts_arrived = false;
  // The queue transport: the link the transfer is entering, when its first byte entered
  // the previous link and when its last byte left it.
  int link = 0;
  int wire_src = 0;  // the node the transfer leaves
  int wire_dst = 0;  // the node the transfer goes to
  double wire_start = 0, wire_end = 0;
};

class MessagePool {
public:
  uint32_t acquire()
  {
    if (free_.empty()) {
      messages_.emplace_back();
      return static_cast<uint32_t>(messages_.size() - 1);
    }
    uint32_t id = free_.back();
    free_.pop_back();
    messages_[id] = Message{};
    return id;
  }
  void release(uint32_t id)
  {
    free_.push_back(id);
  }
  Message& operator[](uint32_t id) { return messages_[id]; }
  const Message& operator[](uint32_t id) const { return messages_[id]; }

private:
  // A deque: growing it keeps references valid, and other actors grow it while one
  // actor is suspended in a SimGrid call.
  std::deque<Message> messages_;
  std::vector<uint32_t> free_;
};

}  // namespace hopsim
