#include "headroom/tracking/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

namespace headroom::tracking {
namespace {

// curl_global_init is not thread-safe and must run once before any handle exists.
void initialise_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The answer being received, held to the client's limit: a server that streams without end must
// not grow the process (a 700 MB answer once took a run to 4.65 GB and its host budget's stop).
struct BoundedBody {
  std::string* body;
  std::size_t limit;
  bool overflowed = false;
};

std::size_t append_bounded(char* data, std::size_t size, std::size_t count, void* target) {
  auto& sink = *static_cast<BoundedBody*>(target);
  const std::size_t bytes = size * count;
  if (sink.body->size() + bytes > sink.limit) {
    sink.overflowed = true;
    return 0;  // anything but `bytes` makes libcurl abort the transfer (CURLE_WRITE_ERROR)
  }
  sink.body->append(data, bytes);
  return bytes;
}

// Whether `authority` (what precedes the first '/', '?' or '#') reads as a host with an optional
// numeric port. When it does not ("u:Pa55" before a '#' or '/' of the password), those characters
// belong to the user info, which then ends at the URL's last '@'.
bool reads_as_host_and_port(std::string_view authority) {
  const auto colon = authority.find(':');
  if (colon == std::string_view::npos) return true;
  const auto port = authority.substr(colon + 1);
  return std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Where the user info of `url` lies: [first, second) with second at its '@'; nullopt when the URL
// has no '@' in its authority. A URL without a scheme ("user:pw@host", a mistake that is still
// quoted in the error about it) has its authority first. A password holding '/', '?' or '#'
// unencoded (an error the server will refuse, but one that is printed first) must not end the
// user info at that character: when what precedes it is no host[:port], or it is a '?' or '#'
// with an '@' after it, the user info runs to the last '@'. Masking too much is the safe error.
std::optional<std::pair<std::size_t, std::size_t>> user_info_span(std::string_view url) {
  const auto scheme_end = url.find("://");
  const std::size_t begin = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const auto authority_end = std::min(url.find_first_of("/?#", begin), url.size());
  const auto at = url.substr(0, authority_end).rfind('@');
  if (at != std::string_view::npos && at >= begin) return std::pair{begin, at};
  const auto last_at = url.rfind('@');
  if (authority_end == url.size() || last_at == std::string_view::npos || last_at < authority_end)
    return std::nullopt;
  const bool delimiter_in_password =
      url[authority_end] != '/' ||
      !reads_as_host_and_port(url.substr(begin, authority_end - begin));
  if (!delimiter_in_password) return std::nullopt;  // a path's '@' (http://host:5000/p@q)
  return std::pair{begin, last_at};
}

// libcurl calls this about once a second, and more often while data moves: the way to end a
// request that is waiting on a server which never answers before its own timeout.
int abort_when_due(void* client_deadline, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto& deadline = *static_cast<std::atomic<std::int64_t>*>(client_deadline);
  return std::chrono::steady_clock::now().time_since_epoch().count() > deadline.load() ? 1 : 0;
}

}  // namespace

std::string without_user_info(std::string_view url) {
  const auto span = user_info_span(url);
  if (!span) return std::string(url);
  return std::string(url.substr(0, span->first)) + "***" + std::string(url.substr(span->second));
}

std::string_view user_info_of(std::string_view url) {
  const auto span = user_info_span(url);
  return span ? url.substr(span->first, span->second - span->first) : std::string_view();
}

struct HttpClient::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

HttpClient::HttpClient(HttpTimeouts timeouts)
    : handle_(std::make_unique<Handle>()), timeouts_(timeouts) {
  initialise_curl_once();
  handle_->curl = curl_easy_init();
  if (handle_->curl == nullptr) throw std::runtime_error("libcurl: cannot create a handle");
}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::request(std::string_view method, const std::string& url,
                                 std::string_view body, std::string_view content_type) {
  CURL* curl = handle_->curl;
  curl_easy_reset(curl);
  HttpResponse response;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts_.connect.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts_.total.count()));
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, abort_when_due);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &abort_at_);
  BoundedBody sink{&response.body, timeouts_.max_response_bytes};
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_bounded);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  const std::string verb(method);
  curl_slist* headers = nullptr;
  if (verb != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, verb.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    headers = curl_slist_append(headers, ("Content-Type: " + std::string(content_type)).c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (sink.overflowed)
    throw HttpTransportError(verb + " " + without_user_info(url) + ": the answer exceeds " +
                             std::to_string(timeouts_.max_response_bytes) +
                             " bytes, far more than a tracking server sends; not read further");
  if (code != CURLE_OK)
    throw HttpTransportError(verb + " " + without_user_info(url) + ": " +
                             (error[0] != '\0' ? error : curl_easy_strerror(code)));
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

void HttpClient::abort_after(std::chrono::steady_clock::time_point deadline) {
  const auto at = deadline.time_since_epoch().count();
  std::int64_t current = abort_at_.load();
  while (at < current && !abort_at_.compare_exchange_weak(current, at)) {
  }
}

std::string HttpClient::escape(std::string_view text) {
  char* escaped = curl_easy_escape(handle_->curl, text.data(), static_cast<int>(text.size()));
  if (escaped == nullptr) throw std::runtime_error("libcurl: cannot escape a URL component");
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

}  // namespace headroom::tracking
