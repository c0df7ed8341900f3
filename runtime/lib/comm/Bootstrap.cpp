//===- Bootstrap.cpp - how the ranks of a job meet ------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The wire: every message is a Header and `length` payload bytes.
//   HELLO   rank -> root  a = rank, b = ranks; payload: secret, timeout (ms)
//   WELCOME root -> rank  every rank has arrived
//   GATHER  rank -> root  payload: this rank's blob
//   RESULT  root -> rank  a = ranks; payload: every blob in rank order
//   ERROR   root -> rank  payload: why the job cannot go on
// The root serves one job: it stops after an error or once every rank has
// disconnected. Every length is bounded by what its type may carry before
// anything is allocated (Bootstrap::maxMessageBytes): a peer that claims
// more is refused by name.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Bootstrap.h"
#include "sdma/runtime/Limits.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace sdma::rt;

namespace {

constexpr uint32_t kMagic = 0x53444d41; // "SDMA"
constexpr int kSecretBytes = 16;
constexpr size_t kHelloBytes = kSecretBytes + 8; // secret, timeout (ms)
/// The most connections waiting for their hello; a new one beyond this
/// drops the oldest (a real rank says hello as soon as it connects).
constexpr size_t kMaxPending = 64;
enum Type : uint32_t { Hello = 1, Welcome, Gather, Result, Refused };

struct Header {
  uint32_t magic, type, a, b;
  uint64_t length;
};
static_assert(sizeof(Header) == 24, "the wire's header is 24 bytes");

/// What an id holds, at fixed offsets of UniqueId::bytes.
struct IdFields {
  uint32_t magic;
  uint32_t address; // IPv4, network order
  uint16_t port;    // network order
  uint8_t secret[kSecretBytes];
};
static_assert(sizeof(IdFields) <= sizeof(UniqueId), "id too small");

using Clock = std::chrono::steady_clock;

/// Milliseconds left until `deadline` (0 if past).
int msLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - Clock::now())
                  .count();
  return left > 0 ? static_cast<int>(std::min<long long>(left, 1 << 30)) : 0;
}

/// Sends everything; false on a closed or failed socket.
bool sendAll(int fd, const void *data, size_t bytes) {
  const char *p = static_cast<const char *>(data);
  while (bytes) {
    ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    bytes -= n;
  }
  return true;
}

bool sendMessage(int fd, uint32_t type, uint32_t a, uint32_t b,
                 const std::string &payload) {
  Header h{kMagic, type, a, b, payload.size()};
  if (type == Refused && payload.size() > Bootstrap::kMaxReasonBytes)
    h.length = Bootstrap::kMaxReasonBytes; // the end of a long reason goes
  // One send: a header and its payload in two segments would wait for a
  // delayed ACK.
  std::string message(reinterpret_cast<const char *>(&h), sizeof(h));
  message.append(payload, 0, h.length);
  return sendAll(fd, message.data(), message.size());
}

enum class Received { Ok, Closed, TimedOut, Malformed, TooLarge };

/// Receives exactly `bytes` before `deadline`.
Received receiveAll(int fd, void *data, size_t bytes,
                    Clock::time_point deadline) {
  char *p = static_cast<char *>(data);
  while (bytes) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, msLeft(deadline));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      return Received::TimedOut;
    ssize_t n = ::recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Received::Closed;
    p += n;
    bytes -= n;
  }
  return Received::Ok;
}

/// One message: of type `expected`, at most `expectedBytes` of payload;
/// of any other type, at most a reason's. The header is checked before
/// anything is allocated: TooLarge leaves `h` as it came, for the error.
Received receiveMessage(int fd, Header &h, std::string &payload,
                        Clock::time_point deadline, Type expected,
                        uint64_t expectedBytes) {
  Received r = receiveAll(fd, &h, sizeof(h), deadline);
  if (r != Received::Ok)
    return r;
  if (h.magic != kMagic)
    return Received::Malformed;
  if (h.length > (h.type == expected ? expectedBytes
                                     : uint64_t(Bootstrap::kMaxReasonBytes)))
    return Received::TooLarge;
  payload.assign(h.length, '\0');
  return receiveAll(fd, payload.data(), h.length, deadline);
}

/// Why a message from `who` was not one: for errors.
std::string notAMessage(Received r, const Header &h, uint64_t expectedBytes,
                        const std::string &who) {
  switch (r) {
  case Received::TimedOut:
    return "no answer from " + who;
  case Received::Malformed:
    return who + " sent something that is not an sdma bootstrap message";
  case Received::TooLarge:
    return who + " sent a message of " + std::to_string(h.length) +
           " bytes (type " + std::to_string(h.type) + "), more than the " +
           std::to_string(h.type == Result || h.type == Gather
                              ? expectedBytes
                              : uint64_t(Bootstrap::kMaxReasonBytes)) +
           " it may carry: refused";
  default:
    return who + " closed the connection";
  }
}

std::string rankList(const std::vector<int> &ranks) {
  constexpr size_t kShown = 16;
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kShown)
    text += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return text;
}

/// Compares in time independent of where the bytes differ.
bool sameSecret(const void *a, const void *b) {
  const auto *x = static_cast<const uint8_t *>(a);
  const auto *y = static_cast<const uint8_t *>(b);
  uint8_t diff = 0;
  for (int i = 0; i < kSecretBytes; ++i)
    diff |= x[i] ^ y[i];
  return diff == 0;
}

/// A connection the root has accepted that has not yet said hello.
struct Pending {
  int fd;
  Clock::time_point deadline;
  char bytes[sizeof(Header) + kHelloBytes];
  size_t got = 0;
};

/// The root of one job (a detached thread owns it).
class Root {
public:
  Root(int listener, const uint8_t *secret) : listener_(listener) {
    std::memcpy(secret_, secret, kSecretBytes);
  }
  void serve();

private:
  /// Accepts what is waiting on the listener, oldest pending dropped first
  /// beyond kMaxPending.
  void acceptAll();
  /// Reads what `p` has sent; true once it is done with (admitted,
  /// refused or closed).
  bool readHello(Pending &p);
  /// Checks a complete hello's rank and rank count; admits it or closes it.
  void admit(int fd, const Header &h, const char *payload);
  /// Tells every connected rank `why` and stops.
  void fail(const std::string &why) {
    for (int fd : ranks_)
      if (fd >= 0)
        sendMessage(fd, Refused, 0, 0, why);
    failed_ = true;
  }
  void round();
  void closePending() {
    for (Pending &p : pending_)
      ::close(p.fd);
    pending_.clear();
  }
  void closeAll() {
    for (int &fd : ranks_)
      if (fd >= 0)
        ::close(fd), fd = -1;
    closePending();
    if (listener_ >= 0)
      ::close(listener_), listener_ = -1;
  }

  int listener_;
  uint8_t secret_[kSecretBytes];
  std::vector<int> ranks_; // socket per rank, -1 until it arrives or after
  int expected_ = 0, arrived_ = 0;
  uint64_t timeoutMs_ = 0;
  bool failed_ = false;
  std::vector<int> gone_; // ranks whose connection closed
  std::deque<Pending> pending_;
};

void Root::acceptAll() {
  while (true) {
    int fd =
        ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
      return; // EAGAIN: nothing more now (or a failed accept: try later)
    if (pending_.size() >= kMaxPending) {
      ::close(pending_.front().fd);
      pending_.pop_front();
    }
    Pending p;
    p.fd = fd;
    p.deadline = Clock::now() + std::chrono::milliseconds(Bootstrap::kHelloMs);
    pending_.push_back(p);
  }
}

bool Root::readHello(Pending &p) {
  auto refuse = [&](const char *why) {
    sendMessage(p.fd, Refused, 0, 0, why); // non-blocking: best effort
    ::close(p.fd);
    return true;
  };
  // Exactly what a hello holds, never more: the header first, checked,
  // then its payload.
  size_t want = p.got < sizeof(Header) ? sizeof(Header) : sizeof(p.bytes);
  ssize_t n = ::recv(p.fd, p.bytes + p.got, want - p.got, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return false;
  if (n <= 0) {
    ::close(p.fd);
    return true;
  }
  p.got += n;
  if (p.got == sizeof(Header)) {
    Header h;
    std::memcpy(&h, p.bytes, sizeof(h));
    if (h.magic != kMagic || h.type != Hello || h.length != kHelloBytes)
      return refuse("refused: not a hello with this job's unique id");
  }
  if (p.got < sizeof(p.bytes))
    return false;
  // The secret before anything else the hello says.
  const char *payload = p.bytes + sizeof(Header);
  if (!sameSecret(payload, secret_))
    return refuse("refused: not a hello with this job's unique id");
  Header h;
  std::memcpy(&h, p.bytes, sizeof(h));
  // Admitted ranks are served with blocking sends and bounded receives.
  int flags = ::fcntl(p.fd, F_GETFL);
  ::fcntl(p.fd, F_SETFL, flags & ~O_NONBLOCK);
  admit(p.fd, h, payload);
  return true;
}

void Root::admit(int fd, const Header &h, const char *payload) {
  int64_t rank = h.a, ranks = h.b;
  std::string why;
  if (ranks < 1 || ranks > sdma::kMaxRanks || rank >= ranks)
    why = "rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
          " is out of range";
  else if (expected_ && ranks != expected_)
    why = "rank " + std::to_string(rank) + " says the job has " +
          std::to_string(ranks) + " ranks, earlier ranks said " +
          std::to_string(expected_);
  else if (expected_ && ranks_[rank] >= 0)
    why = "rank " + std::to_string(rank) + " joined twice";
  if (!why.empty()) {
    sendMessage(fd, Refused, 0, 0, why);
    ::close(fd);
    if (expected_)
      fail(why); // a misconfigured job: every rank hears it
    return;
  }
  if (!expected_) {
    expected_ = static_cast<int>(ranks);
    ranks_.assign(ranks, -1);
    std::memcpy(&timeoutMs_, payload + kSecretBytes, 8);
  }
  ranks_[rank] = fd;
  ++arrived_;
}

void Root::serve() {
  // Join: accept until every rank has said hello (the deadline runs from
  // the first hello). Every connection is read as its bytes come, none
  // waited on alone: one that is idle, slow or foreign holds up no other.
  int flags = ::fcntl(listener_, F_GETFL);
  ::fcntl(listener_, F_SETFL, flags | O_NONBLOCK);
  Clock::time_point deadline = Clock::time_point::max();
  while (!failed_ && (!expected_ || arrived_ < expected_)) {
    std::vector<pollfd> fds{{listener_, POLLIN, 0}};
    Clock::time_point wake = deadline;
    for (const Pending &p : pending_) {
      fds.push_back({p.fd, POLLIN, 0});
      wake = std::min(wake, p.deadline);
    }
    int wait = wake == Clock::time_point::max() ? 1000 : msLeft(wake);
    int ready = ::poll(fds.data(), fds.size(), std::min(wait, 1000));
    if (ready < 0 && errno != EINTR)
      ready = 0;
    // The pending first (their indices are fds' less one), then new ones.
    std::deque<Pending> still;
    Clock::time_point now = Clock::now();
    for (size_t i = 0; i < pending_.size(); ++i) {
      Pending &p = pending_[i];
      bool first = !expected_;
      if (ready > 0 && fds[i + 1].revents && readHello(p)) {
        if (first && expected_)
          deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
        continue;
      }
      if (now >= p.deadline) { // no hello in time: not one of ours
        ::close(p.fd);
        continue;
      }
      still.push_back(p);
    }
    pending_.swap(still);
    if (ready > 0 && fds[0].revents)
      acceptAll();
    if (!failed_ && expected_ && arrived_ < expected_ &&
        Clock::now() >= deadline) {
      std::vector<int> missing;
      for (int r = 0; r < expected_; ++r)
        if (ranks_[r] < 0)
          missing.push_back(r);
      fail(rankList(missing) + " did not arrive within " +
           std::to_string(timeoutMs_) + " ms");
    }
  }
  // Nobody else may join: later connections are refused by the kernel.
  closePending();
  ::close(listener_);
  listener_ = -1;
  if (!failed_) {
    for (int fd : ranks_) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      sendMessage(fd, Welcome, 0, 0, "");
    }
    while (!failed_ && static_cast<int>(gone_.size()) < expected_)
      round();
  }
  closeAll();
}

/// One all-gather round (or every rank leaving).
void Root::round() {
  std::vector<std::string> blobs(expected_);
  std::vector<bool> have(expected_, false);
  int count = 0;
  Clock::time_point deadline = Clock::time_point::max();
  while (!failed_ && count + static_cast<int>(gone_.size()) < expected_) {
    std::vector<pollfd> fds;
    std::vector<int> which;
    for (int r = 0; r < expected_; ++r)
      if (ranks_[r] >= 0 && !have[r]) {
        fds.push_back({ranks_[r], POLLIN, 0});
        which.push_back(r);
      }
    int wait = deadline == Clock::time_point::max() ? 1000 : msLeft(deadline);
    int ready = ::poll(fds.data(), fds.size(), std::min(wait, 1000));
    if (ready == 0 && count && Clock::now() >= deadline) {
      std::vector<int> missing;
      for (int r = 0; r < expected_; ++r)
        if (!have[r])
          missing.push_back(r);
      fail(rankList(missing) + " did not reach the all-gather within " +
           std::to_string(timeoutMs_) + " ms");
      return;
    }
    for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents)
        continue;
      int r = which[i];
      Header h;
      std::string payload;
      Received got = receiveMessage(ranks_[r], h, payload,
                                    Clock::now() + std::chrono::seconds(10),
                                    Gather, Bootstrap::kMaxBlobBytes);
      if (got == Received::TooLarge) {
        fail(notAMessage(got, h, Bootstrap::kMaxBlobBytes,
                         "rank " + std::to_string(r)));
        return;
      }
      if (got != Received::Ok || h.type != Gather) {
        ::close(ranks_[r]);
        ranks_[r] = -1;
        gone_.push_back(r);
        // Leaving is how a rank ends; mid-round the others are told now,
        // otherwise at the next round.
        if (count > 0)
          fail("rank " + std::to_string(r) + " left the job");
        continue;
      }
      if (!count)
        deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
      blobs[r] = std::move(payload);
      have[r] = true;
      ++count;
    }
  }
  if (failed_ || count == 0)
    return;
  if (!gone_.empty()) {
    fail(rankList(gone_) + " left the job");
    return;
  }
  for (int r = 1; r < expected_; ++r)
    if (blobs[r].size() != blobs[0].size()) {
      fail("all-gather: rank " + std::to_string(r) + " gave " +
           std::to_string(blobs[r].size()) + " bytes, rank 0 gave " +
           std::to_string(blobs[0].size()));
      return;
    }
  std::string all;
  for (const std::string &blob : blobs)
    all += blob;
  for (int fd : ranks_)
    sendMessage(fd, Result, expected_, 0, all);
}

} // namespace

bool sdma::rt::createUniqueId(UniqueId &id, Error &error) {
  IdFields fields{};
  fields.magic = kMagic;
  int urandom = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool random = urandom >= 0 &&
                ::read(urandom, fields.secret, kSecretBytes) == kSecretBytes;
  if (urandom >= 0)
    ::close(urandom);
  if (!random) {
    return error.fail(ErrorKind::System,
                      "bootstrap: cannot read /dev/urandom for the job's "
                      "secret");
  }
  const char *address = std::getenv("SDMA_BOOTSTRAP_ADDR");
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  if (inet_pton(AF_INET, address ? address : "127.0.0.1", &sin.sin_addr) != 1) {
    return error.fail(ErrorKind::InvalidArgument,
                      std::string("bootstrap: SDMA_BOOTSTRAP_ADDR='") +
                          address + "' is not an IPv4 address");
  }
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t length = sizeof(sin);
  if (listener < 0 ||
      ::bind(listener, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)) != 0 ||
      ::listen(listener, 128) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr *>(&sin), &length) !=
          0) {
    error.fail(ErrorKind::System, std::string("bootstrap: cannot listen on ") +
                                      (address ? address : "127.0.0.1") + ": " +
                                      std::strerror(errno));
    if (listener >= 0)
      ::close(listener);
    return false;
  }
  fields.address = sin.sin_addr.s_addr;
  fields.port = sin.sin_port;
  std::memset(id.bytes, 0, sizeof(id.bytes));
  std::memcpy(id.bytes, &fields, sizeof(fields));
  std::thread([listener,
               secret = std::string(reinterpret_cast<char *>(fields.secret),
                                    kSecretBytes)] {
    Root(listener, reinterpret_cast<const uint8_t *>(secret.data())).serve();
  }).detach();
  return true;
}

std::unique_ptr<Bootstrap> Bootstrap::connect(const UniqueId &id, int rank,
                                              int ranks, uint64_t timeoutMs,
                                              Error &error) {
  IdFields fields;
  std::memcpy(&fields, id.bytes, sizeof(fields));
  if (fields.magic != kMagic) {
    error.fail(ErrorKind::InvalidArgument,
               "bootstrap: not an sdma unique id (sdmaGetUniqueId on one "
               "rank makes it; every rank must be given its bytes)");
    return nullptr;
  }
  if (ranks < 1 || ranks > sdma::kMaxRanks || rank < 0 || rank >= ranks) {
    error.fail(ErrorKind::InvalidArgument,
               "bootstrap: rank " + std::to_string(rank) + " of " +
                   std::to_string(ranks) + " ranks (1 to " +
                   std::to_string(sdma::kMaxRanks) + " ranks)");
    return nullptr;
  }
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = fields.address;
  sin.sin_port = fields.port;
  char where[64];
  inet_ntop(AF_INET, &sin.sin_addr, where, sizeof(where));
  std::string root =
      std::string(where) + ":" + std::to_string(ntohs(sin.sin_port));
  // The hello, then WELCOME once every rank is in (or an ERROR saying who
  // is missing); the root's own deadline comes first, ours is a backstop.
  Clock::time_point deadline = Clock::now() +
                               std::chrono::milliseconds(timeoutMs) +
                               std::chrono::seconds(5);
  int fd = -1;
  while (fd < 0) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 &&
        ::connect(fd, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)) == 0)
      break;
    int why = errno;
    if (fd >= 0)
      ::close(fd);
    fd = -1;
    if (Clock::now() >= deadline) {
      error.fail(ErrorKind::Remote, "bootstrap: rank " + std::to_string(rank) +
                                        " cannot reach the job's root at " +
                                        root + ": " + std::strerror(why));
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string hello(reinterpret_cast<const char *>(fields.secret),
                    kSecretBytes);
  hello.append(reinterpret_cast<const char *>(&timeoutMs), 8);
  Header h;
  std::string payload;
  Received r = Received::Closed;
  if (sendMessage(fd, Hello, rank, ranks, hello))
    r = receiveMessage(fd, h, payload, deadline, Welcome, 0);
  if (r != Received::Ok || h.type != Welcome) {
    error.fail(
        ErrorKind::Remote,
        "bootstrap: rank " + std::to_string(rank) + ": " +
            (r == Received::Ok && h.type == Refused
                 ? payload
                 : notAMessage(r == Received::Ok ? Received::Malformed : r, h,
                               0, "the job's root at " + root)));
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<Bootstrap> bootstrap(new Bootstrap());
  bootstrap->socket_ = fd;
  bootstrap->rank_ = rank;
  bootstrap->ranks_ = ranks;
  bootstrap->timeoutMs_ = timeoutMs;
  bootstrap->root_ = root;
  return bootstrap;
}

Bootstrap::~Bootstrap() {
  if (socket_ >= 0)
    ::close(socket_);
}

bool Bootstrap::allGather(const std::string &mine,
                          std::vector<std::string> &all, Error &error,
                          bool leaving) {
  // Every failure here is the job's: a peer or the root left or disagreed.
  auto fail = [&](const std::string &why) {
    return error.fail(ErrorKind::Remote,
                      "bootstrap: rank " + std::to_string(rank_) + ": " + why);
  };
  if (mine.size() > kMaxBlobBytes)
    return error.fail(ErrorKind::InvalidArgument,
                      "bootstrap: rank " + std::to_string(rank_) +
                          ": an all-gather of " + std::to_string(mine.size()) +
                          " bytes; the most is " +
                          std::to_string(kMaxBlobBytes));
  {
    std::lock_guard<std::mutex> lock(socketMutex_);
    if (!leaving && isInterrupted_.load(std::memory_order_relaxed))
      return error.fail(ErrorKind::InvalidUsage, "bootstrap: rank " +
                                                     std::to_string(rank_) +
                                                     ": " + interrupted_);
    inFlight_ = true;
  }
  struct Landed {
    Bootstrap &b;
    ~Landed() {
      std::lock_guard<std::mutex> lock(b.socketMutex_);
      b.inFlight_ = false;
    }
  } landed{*this};
  if (socket_ < 0)
    return fail("the job has already failed" +
                (failure_.empty() ? std::string() : ": " + failure_));
  std::string root = "the job's root at " + root_;
  // A leaving blob that interrupt() sent already: only its answer is read.
  const size_t sent = leaving ? leftBytes_ : 0;
  if (!sent && !sendMessage(socket_, Gather, 0, 0, mine))
    return !interrupted(error) && fail(root + " closed the connection");
  // The answer is exactly every rank's blob: nothing larger is read.
  uint64_t expected = uint64_t(sent ? sent : mine.size()) * ranks_;
  Header h;
  std::string payload;
  Received r =
      receiveMessage(socket_, h, payload,
                     Clock::now() + std::chrono::milliseconds(timeoutMs_) +
                         std::chrono::seconds(5),
                     Result, expected);
  if (r != Received::Ok || h.type != Result) {
    {
      std::lock_guard<std::mutex> lock(socketMutex_);
      ::close(socket_);
      socket_ = -1;
    }
    if (interrupted(error))
      return false;
    failure_ = r == Received::Ok && h.type == Refused
                   ? payload
                   : notAMessage(r == Received::Ok ? Received::Malformed : r, h,
                                 expected, root);
    return fail(failure_);
  }
  if (payload.size() != expected)
    return fail(root + " answered the all-gather with " +
                std::to_string(payload.size()) + " bytes, not " +
                std::to_string(expected));
  all.resize(ranks_);
  for (int i = 0; i < ranks_; ++i)
    all[i] = payload.substr(i * (expected / ranks_), expected / ranks_);
  return true;
}

void Bootstrap::interrupt(const std::string &why, const std::string &leaving) {
  std::lock_guard<std::mutex> lock(socketMutex_);
  bool first = !isInterrupted_.load(std::memory_order_relaxed);
  if (interrupted_.empty())
    interrupted_ = why;
  isInterrupted_.store(true, std::memory_order_release);
  // An exchange waiting on the socket returns (end of file); the root sees
  // this rank leave and fails the job's exchange for the others. With none
  // in flight the socket stays, and the leaving blob goes now: the others
  // learn at their next exchange (or the one they wait in), not when this
  // rank's communicator is destroyed; the rank's leaving exchange still
  // waits (bounded) for the answer before its memory goes.
  if (inFlight_ && socket_ >= 0)
    ::shutdown(socket_, SHUT_RDWR);
  else if (first && socket_ >= 0 && !leaving.empty() &&
           leaving.size() <= kMaxBlobBytes &&
           sendMessage(socket_, Gather, 0, 0, leaving))
    leftBytes_ = leaving.size();
}

bool Bootstrap::interrupted(Error &error) {
  if (!isInterrupted_.load(std::memory_order_acquire))
    return false;
  std::lock_guard<std::mutex> lock(socketMutex_);
  error.fail(ErrorKind::InvalidUsage,
             "bootstrap: rank " + std::to_string(rank_) + ": " + interrupted_);
  return true;
}

bool Bootstrap::barrier(Error &error) {
  std::vector<std::string> all;
  return allGather(std::string(1, '\0'), all, error);
}
