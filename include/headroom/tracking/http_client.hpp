// A small blocking HTTP client over libcurl for the tracking servers' REST APIs. One instance
// per thread (a curl handle is not thread-safe); requests never raise signals (CURLOPT_NOSIGNAL),
// so a client may live on a background thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace headroom::tracking {

struct HttpResponse {
  long status = 0;  // HTTP status code
  std::string body;
};

// The request never reached an answer: refused, unreachable, timed out.
class HttpTransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How long a request may take, and how much of an answer is read.
struct HttpTimeouts {
  std::chrono::milliseconds connect{2000};
  std::chrono::milliseconds total{10000};  // the whole request, answer included
  // An answer longer than this is cut off and the request fails (HttpTransportError): tracking
  // servers answer in kilobytes, and the body is held in memory.
  std::size_t max_response_bytes = std::size_t{4} << 20;
};

// `url` with its user info (the `user:password@` before the host) replaced by `***@`, for
// printing: a tracking URI may carry credentials, which must never reach a terminal, a log or a
// file. A URL without user info is returned as it is.
std::string without_user_info(std::string_view url);

// The user info of `url` (`user:password`, without the `@`), empty when it has none.
std::string_view user_info_of(std::string_view url);

class HttpClient {
 public:
  explicit HttpClient(HttpTimeouts timeouts = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // `method` is GET, POST or PUT; `body` is sent with `content_type` unless empty (GET).
  // Throws HttpTransportError when no answer came (its message names the URL without its user
  // info); any HTTP status is an answer.
  HttpResponse request(std::string_view method, const std::string& url, std::string_view body = {},
                       std::string_view content_type = "application/json");

  // `text` percent-encoded for a URL query or path segment.
  std::string escape(std::string_view text);

  // Requests still running at `deadline` (and any started after it) end then, within about a
  // second, as HttpTransportError: a shutdown's grace holds even against a server that accepted
  // the connection and never answers. The earliest deadline given wins. The one member that is
  // thread-safe: another thread may call it while a request runs.
  void abort_after(std::chrono::steady_clock::time_point deadline);

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
  HttpTimeouts timeouts_;
  // steady_clock ticks; no deadline until abort_after.
  std::atomic<std::int64_t> abort_at_{std::numeric_limits<std::int64_t>::max()};
};

}  // namespace headroom::tracking
