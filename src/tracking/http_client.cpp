#include "headroom/tracking/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
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

std::size_t append_to_string(char* data, std::size_t size, std::size_t count, void* target) {
  static_cast<std::string*>(target)->append(data, size * count);
  return size * count;
}

// Where the user info of `url` lies: [first, second) with second at its '@'; nullopt when the URL
// has no '@' in its authority. A URL without a scheme ("user:pw@host", a mistake that is still
// quoted in the error about it) has its authority first.
std::optional<std::pair<std::size_t, std::size_t>> user_info_span(std::string_view url) {
  const auto scheme_end = url.find("://");
  const std::size_t begin = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const auto authority_end = std::min(url.find_first_of("/?#", begin), url.size());
  const auto at = url.substr(0, authority_end).rfind('@');
  if (at == std::string_view::npos || at < begin) return std::nullopt;
  return std::pair{begin, at};
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
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_to_string);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
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
  if (code != CURLE_OK)
    throw HttpTransportError(verb + " " + without_user_info(url) + ": " +
                             (error[0] != '\0' ? error : curl_easy_strerror(code)));
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

std::string HttpClient::escape(std::string_view text) {
  char* escaped = curl_easy_escape(handle_->curl, text.data(), static_cast<int>(text.size()));
  if (escaped == nullptr) throw std::runtime_error("libcurl: cannot escape a URL component");
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

}  // namespace headroom::tracking
