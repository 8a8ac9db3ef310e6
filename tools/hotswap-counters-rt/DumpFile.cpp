//===- DumpFile.cpp - Where a dump goes and what it says ------------------===//

#include "DumpFile.h"

#include "Report.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace hotswap_counters {

namespace {

std::string directory() {
  const char *Dir = std::getenv("HOTSWAP_COUNTERS_DIR");
  return Dir && *Dir ? Dir : ".";
}

std::string baseName(const CounterArea &Area) {
  return "hotswap-counters." + std::to_string(::getpid()) + "." +
         std::to_string(Area.Sequence);
}

/// \p Data to \p Path through a temporary file and a rename; false after
/// reporting.
bool writeWhole(const std::string &Path, const void *Data, size_t Size) {
  std::string Temp = Path + ".tmp";
  int Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Fd < 0) {
    report("cannot write '%s': %s", Path.c_str(), std::strerror(errno));
    return false;
  }
  const char *P = static_cast<const char *>(Data);
  size_t Left = Size;
  while (Left > 0) {
    ssize_t N = ::write(Fd, P, Left);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      report("cannot write '%s': %s", Path.c_str(),
             N < 0 ? std::strerror(errno) : "nothing written");
      ::close(Fd);
      ::unlink(Temp.c_str());
      return false;
    }
    P += N;
    Left -= static_cast<size_t>(N);
  }
  if (::close(Fd) != 0 || ::rename(Temp.c_str(), Path.c_str()) != 0) {
    report("cannot write '%s': %s", Path.c_str(), std::strerror(errno));
    ::unlink(Temp.c_str());
    return false;
  }
  return true;
}

void appendJsonString(std::string &Out, const std::string &S) {
  Out += '"';
  for (unsigned char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += static_cast<char>(C);
    } else if (C < 0x20) {
      char Esc[8];
      std::snprintf(Esc, sizeof(Esc), "\\u%04x", C);
      Out += Esc;
    } else {
      Out += static_cast<char>(C);
    }
  }
  Out += '"';
}

} // namespace

void writeDump(const CounterArea &Area, const std::vector<uint8_t> &Bytes,
               const char *When) {
  std::string Dir = directory();
  std::string Base = baseName(Area);
  if (!writeWhole(Dir + "/" + Base + ".bin", Bytes.data(), Bytes.size()))
    return;
  char Address[24];
  std::snprintf(Address, sizeof(Address), "0x%llx",
                static_cast<unsigned long long>(Area.Address));
  std::string Json = "{\"dump\":";
  appendJsonString(Json, Base + ".bin");
  Json += ",\"pid\":" + std::to_string(::getpid());
  Json += ",\"sequence\":" + std::to_string(Area.Sequence);
  Json += ",\"symbol\":";
  appendJsonString(Json, CounterSymbolName);
  Json += ",\"size\":" + std::to_string(Area.Size);
  Json += ",\"address\":";
  appendJsonString(Json, Address);
  Json += ",\"agent\":";
  appendJsonString(Json, Area.AgentName);
  Json += ",\"agent_index\":" + std::to_string(Area.AgentIndex);
  Json += ",\"uri\":";
  if (Area.Uri.empty())
    Json += "null";
  else
    appendJsonString(Json, Area.Uri);
  Json += ",\"written_at\":";
  appendJsonString(Json, When);
  Json += "}\n";
  writeWhole(Dir + "/" + Base + ".json", Json.data(), Json.size());
}

} // namespace hotswap_counters
