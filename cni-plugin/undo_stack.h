// An undo stack for all-or-nothing operations (ADD): each completed step
// pushes the action that reverses it; unless dismissed on success, the stack
// runs those actions newest first when it goes out of scope.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::cni {

class UndoStack {
 public:
  UndoStack() = default;
  UndoStack(const UndoStack&) = delete;
  UndoStack& operator=(const UndoStack&) = delete;
  ~UndoStack() { unwind(); }

  // `undo` must not throw; it reports its own failures (usually by logging),
  // because an undo that fails cannot be undone in turn.
  void push(std::function<void()> undo) { steps_.push_back(std::move(undo)); }

  // The operation succeeded: keep everything it did.
  void dismiss() { steps_.clear(); }

  // Runs the pending undo actions now, newest first.
  void unwind() {
    while (!steps_.empty()) {
      std::function<void()> step = std::move(steps_.back());
      steps_.pop_back();
      step();
    }
  }

 private:
  std::vector<std::function<void()>> steps_;  // undo actions, oldest first
};

}  // namespace sluice::cni
