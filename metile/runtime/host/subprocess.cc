#include "metile/runtime/host/subprocess.h"

#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace metile::runtime::host {

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult result;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // fork + exec rather than posix_spawn, to set the parent-death signal: a compiler child of
  // a process killed mid-compile dies with it instead of running on orphaned. The child does
  // only async-signal-safe work before exec.
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
#endif
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execvp(args[0], args.data());
    const char* parts[] = {"cannot run '", args[0], "': no such program or not executable\n"};
    for (const char* part : parts)
      if (write(STDERR_FILENO, part, std::strlen(part)) < 0) break;
    _exit(127);
  }
  const int spawn_error = pid < 0 ? errno : 0;
  close(pipe_fds[1]);
  if (spawn_error != 0) {
    close(pipe_fds[0]);
    result.output = "cannot run '" + argv[0] + "': " + std::strerror(spawn_error);
    return result;
  }
  char chunk[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) result.output.append(chunk, static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace metile::runtime::host
