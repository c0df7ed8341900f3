//===- Agreement.cpp - what every rank of a communicator must agree on ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/Agreement.h"

#include "compile/KernelCache.h"

#include <cstdio>
#include <mutex>
#include <pthread.h>
#include <random>
#include <unistd.h>

using namespace sdma::rt;

namespace {
/// What a rank that refuses a step passes instead of its value.
constexpr char kRefused[] = "\x01refused: ";
/// What a rank that leaves passes (Agreement::leave).
constexpr char kLeaving[] = "\x02leaving: ";

/// An exchange's text, without its padding.
std::string shown(const std::string &exchange) {
  return exchange.substr(0, exchange.find('\0'));
}
} // namespace

std::string sdma::rt::exchangeText(const std::string &text) {
  std::string out = text;
  if (out.size() > kExchangeBytes - 1) {
    char tag[32];
    std::snprintf(tag, sizeof(tag), " #%016llx",
                  static_cast<unsigned long long>(hashBytes(text)));
    out = out.substr(0, kExchangeBytes - 1 - std::string(tag).size()) + tag;
  }
  out.resize(kExchangeBytes, '\0');
  return out;
}

namespace {
/// The process token and who drew it. A fork while another thread holds
/// the lock would leave the child's copy held for ever: the lock is taken
/// around every fork (pthread_atfork) so the child's copy is free.
struct Token {
  std::mutex mutex;
  pid_t drawnFor = 0;
  std::string text;
};
Token &token() {
  static Token *shared = [] {
    auto *t = new Token; // never destroyed: a fork handler may run at exit
    pthread_atfork([] { token().mutex.lock(); }, [] { token().mutex.unlock(); },
                   [] { token().mutex.unlock(); });
    return t;
  }();
  return *shared;
}
/// Made when the library loads, before any thread of its user runs: a
/// fork inside the first call's initialisation would leave the child's
/// copy of its guard held.
[[maybe_unused]] const bool tokenMade = (token(), true);
} // namespace

std::string sdma::rt::processToken() {
  Token &t = token();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.drawnFor != getpid()) {
    t.drawnFor = getpid();
    char random[12];
    std::snprintf(random, sizeof(random), "%08x",
                  static_cast<unsigned>(std::random_device{}()));
    t.text = std::to_string(t.drawnFor) + "." + random;
  }
  return t.text;
}

/// False, naming the first other rank in `all` that is leaving (its
/// communicator destroyed or aborted) where one is, in `what`'s words.
static bool noneLeft(const std::vector<std::string> &all, int rank,
                     const std::string &what, Error &error) {
  for (int r = 0; r < int(all.size()); ++r)
    if (r != rank && all[r].rfind(kLeaving, 0) == 0)
      return error.fail(ErrorKind::Remote,
                        what + ": rank " + std::to_string(r) +
                            " left the job (its communicator was destroyed "
                            "or aborted)");
  return true;
}

bool Agreement::allGather(const std::string &mine,
                          std::vector<std::string> &all, Error &error) {
  return bootstrap_.allGather(exchangeText(mine), all, error) &&
         noneLeft(all, rank(), "an exchange of the communicator", error);
}

bool Agreement::agree(const std::string &mine, const std::string &what,
                      Error &error) {
  std::string padded = exchangeText(mine);
  std::vector<std::string> all;
  if (!bootstrap_.allGather(padded, all, error) ||
      !noneLeft(all, rank(), what, error))
    return false;
  bool refusing = mine.rfind(kRefused, 0) == 0;
  size_t skip = sizeof(kRefused) - 1;
  // A refusal first: the others learn why the step fails.
  for (int r = 0; r < ranks(); ++r)
    if (r != rank() && all[r].rfind(kRefused, 0) == 0) {
      if (refusing)
        return false; // the caller's own reason stands
      return error.fail(ErrorKind::Remote, "rank " + std::to_string(r) +
                                               " refused " + what + ": " +
                                               shown(all[r]).substr(skip));
    }
  if (refusing)
    return false;
  for (int r = 0; r < ranks(); ++r)
    if (all[r] != padded)
      return error.fail(ErrorKind::InvalidUsage,
                        what + " differs between ranks: rank " +
                            std::to_string(r) + " has '" + shown(all[r]) +
                            "', rank " + std::to_string(rank()) + " '" +
                            shown(padded) + "'");
  return true;
}

bool Agreement::agreeUnless(const Error &refused, const std::string &mine,
                            const std::string &what, Error &error) {
  if (refused.empty())
    return agree(mine, what, error);
  agree(kRefused + refused.message, what, error);
  error = refused;
  return false;
}

std::string Agreement::leavingText() const {
  return exchangeText(kLeaving + std::string("rank ") + std::to_string(rank()));
}

void Agreement::leave() {
  std::vector<std::string> all;
  Error ignored;
  bootstrap_.allGather(leavingText(), all, ignored, /*leaving=*/true);
}
