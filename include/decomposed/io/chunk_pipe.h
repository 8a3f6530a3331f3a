// ChunkPipe: a bounded byte pipe between two threads, to turn a push-style
// producer (a decoder that writes its output to a sink) into a pull-style
// stream (a reader that asks for the next n bytes). Compare uses it to walk
// two decoded arrays in step: each side's decoder runs on its own thread and
// pushes into a pipe; the comparator pulls equal element counts from both.
// Memory is bounded by the capacity, whatever the array sizes.
//
// Contract:
//   * exactly one producer thread calls Write() and then Close(status);
//   * exactly one consumer thread calls Read() / CloseReader();
//   * Write() blocks while the pipe is full and returns false once the
//     consumer has called CloseReader() (the producer should stop);
//   * Read(dst, n) blocks until n bytes have arrived and copies them; it
//     returns false when the producer closed first (status() then says why:
//     OK for a clean end, the producer's error otherwise) or after
//     CloseReader();
//   * ByteSink-compatible: Write(std::string_view) and status(), so a
//     decoder templated on ByteSink writes into it directly.
//
// RunProducer(fn) starts `fn(pipe)` on a thread and closes the pipe with
// its status when it returns; the destructor of PipedProducer closes the
// reader and joins, so an abandoned consumer never leaves a thread behind.
//
// Example:
//   decomposed::PipedProducer p([&](decomposed::ChunkPipe& out) {
//     return decode_into(out);      // a push decoder, writing out.Write()
//   });
//   char buf[4096];
//   while (p.pipe().Read(buf, sizeof buf)) use(buf);
//   if (!p.pipe().status().ok()) return p.pipe().status();
#ifndef DECOMPOSED_IO_CHUNK_PIPE_H_
#define DECOMPOSED_IO_CHUNK_PIPE_H_

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace decomposed {

class ChunkPipe {
 public:
  explicit ChunkPipe(size_t capacity = size_t{4} << 20)
      : buf_(std::max<size_t>(capacity, 1)) {}
  ChunkPipe(const ChunkPipe&) = delete;
  ChunkPipe& operator=(const ChunkPipe&) = delete;

  // Producer: appends `data`, blocking while the pipe is full. False once
  // the reader is gone.
  bool Write(std::string_view data) {
    std::unique_lock<std::mutex> lock(mu_);
    while (!data.empty()) {
      not_full_.wait(lock, [&] { return reader_closed_ || size_ < buf_.size(); });
      if (reader_closed_) return false;
      size_t tail = (head_ + size_) % buf_.size();
      size_t room = std::min(buf_.size() - size_, buf_.size() - tail);
      size_t k = std::min(room, data.size());
      // [tail, tail + k) is free and only this (the one) producer touches
      // it until size_ grows: copy without holding the lock, so that the
      // consumer's copy runs at the same time.
      lock.unlock();
      std::memcpy(buf_.data() + tail, data.data(), k);
      lock.lock();
      size_ += k;
      written_ += k;
      data.remove_prefix(k);
      not_empty_.notify_one();
    }
    return true;
  }

  // Producer (ByteSink): nothing is buffered on the producer's side.
  bool Flush() {
    std::lock_guard<std::mutex> lock(mu_);
    return !reader_closed_;
  }
  // Producer (ByteSink): bytes written so far.
  uint64_t position() const {
    std::lock_guard<std::mutex> lock(mu_);
    return written_;
  }

  // Producer: no more data; `s` is the producer's outcome.
  void Close(absl::Status s = absl::OkStatus()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!writer_closed_) {
      writer_closed_ = true;
      status_ = std::move(s);
    }
    not_empty_.notify_all();
  }

  // Consumer: copies exactly `n` bytes into `dst`, blocking until they
  // arrive. False at the end of the data (fewer than n bytes were left;
  // status() says whether that end was clean) or after CloseReader().
  bool Read(char* dst, size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    while (n > 0) {
      not_empty_.wait(lock, [&] { return size_ > 0 || writer_closed_ || reader_closed_; });
      if (reader_closed_) return false;
      if (size_ == 0) return false;  // writer closed
      size_t k = std::min({n, size_, buf_.size() - head_});
      // [head_, head_ + k) stays ours until size_ shrinks (one consumer).
      const size_t head = head_;
      lock.unlock();
      std::memcpy(dst, buf_.data() + head, k);
      lock.lock();
      head_ = (head + k) % buf_.size();
      size_ -= k;
      dst += k;
      n -= k;
      not_full_.notify_one();
    }
    return true;
  }

  // Consumer: gives up; a blocked or later Write() returns false.
  void CloseReader() {
    std::lock_guard<std::mutex> lock(mu_);
    reader_closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  // The producer's status once it closed; OK before.
  absl::Status status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::vector<char> buf_;
  size_t head_ = 0, size_ = 0;
  uint64_t written_ = 0;
  bool writer_closed_ = false, reader_closed_ = false;
  absl::Status status_;
};

// Runs a producer on its own thread, writing into a ChunkPipe.
class PipedProducer {
 public:
  explicit PipedProducer(std::function<absl::Status(ChunkPipe&)> fn,
                         size_t capacity = size_t{4} << 20)
      : pipe_(capacity), thread_([this, fn = std::move(fn)] {
          absl::Status s = fn(pipe_);
          pipe_.Close(std::move(s));
        }) {}
  PipedProducer(const PipedProducer&) = delete;
  PipedProducer& operator=(const PipedProducer&) = delete;
  ~PipedProducer() {
    pipe_.CloseReader();
    if (thread_.joinable()) thread_.join();
  }

  ChunkPipe& pipe() { return pipe_; }

  // Waits for the producer to finish and returns its status. Call after the
  // consumer has read everything it wants (or closed the reader).
  absl::Status Join() {
    if (thread_.joinable()) thread_.join();
    return pipe_.status();
  }

 private:
  ChunkPipe pipe_;
  std::thread thread_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_IO_CHUNK_PIPE_H_
