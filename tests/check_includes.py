#!/usr/bin/env python3
"""No include that is not used (issue 24): every `#include` of a file names something it uses.

For a header of the project, "used" means the including file names at least one of the names the
header declares (its classes, structs, enums, aliases, functions, constants, macros, namespaces'
members at namespace scope). For the standard headers in STD below, one of the listed names. A file's
own header (x.cpp and x.hpp) always counts as used; so does an include marked `// IWYU pragma: keep`
or `// IWYU pragma: export` (a header kept for what it brings in). Headers of other libraries are not
checked. It is a lexical check, not a compiler's (include-what-you-use needs clang's view of a GCC
build and minutes of CI): it finds an include that names nothing of what it brings, which is the
mistake that creeps in as code moves; it does not find a missing include.

Usage: check_includes.py ROOT   (exit 1 and a list when an include is unused)
"""
import os
import re
import sys

DIRS = ["acp", "base", "bench", "cli", "git", "http", "jsonrpc", "mcp", "ops", "proc", "sessions", "shells",
        "state", "tasks", "team", "tmux", "tests/unit", "tests/support", "tests/e2e", "tests/proof"]

# Standard headers and the names one of which a file that includes them uses.
STD = {
    "vector": r"\bvector\b",
    "map": r"\b(multi)?map\b",
    "set": r"\b(multi)?set\b",
    "unordered_map": r"\bunordered_(multi)?map\b",
    "unordered_set": r"\bunordered_(multi)?set\b",
    "deque": r"\bdeque\b",
    "optional": r"\b(optional|nullopt|make_optional)\b",
    "variant": r"\b(variant|visit|holds_alternative|get_if|monostate)\b",
    "string_view": r"\b(string_view|sv)\b|\"sv\b",
    "thread": r"\b(thread|this_thread|jthread)\b",
    "mutex": r"\b(mutex|lock_guard|unique_lock|scoped_lock|once_flag|call_once|recursive_mutex)\b",
    "condition_variable": r"\bcondition_variable(_any)?\b",
    "atomic": r"\batomic(_flag|_bool|_int)?\b|\bmemory_order",
    "future": r"\b(future|promise|async|packaged_task|shared_future)\b",
    "functional": r"\b(function|bind|ref|cref|hash|invoke|less|greater|equal_to|not_fn|identity)\b",
    "memory": r"\b(unique_ptr|shared_ptr|weak_ptr|make_unique|make_shared|enable_shared_from_this|addressof|allocator)\b",
    "fstream": r"\b[io]?fstream\b",
    "sstream": r"\b[io]?stringstream\b|\bstringbuf\b",
    "iostream": r"\b(cout|cerr|cin|clog|endl)\b",
    "regex": r"\b(regex|smatch|regex_match|regex_search|regex_replace|cmatch)\b",
    "chrono": r"\bchrono\b|\d(ms|s|us|ns|min|h)\b",
    "filesystem": r"\bfilesystem\b|\bfs::",
    "random": r"\b(mt19937(_64)?|random_device|uniform_int_distribution|uniform_real_distribution|default_random_engine)\b",
    "array": r"\barray\b",
    "span": r"\bspan\b",
    "deque": r"\bdeque\b",
    "stdexcept": r"\b(runtime_error|logic_error|invalid_argument|out_of_range|domain_error|length_error|overflow_error|range_error)\b",
    "system_error": r"\b(system_error|error_code|errc|system_category|generic_category|make_error_code)\b",
    "type_traits": r"\b(is_\w+|enable_if(_t)?|decay(_t)?|remove_\w+|conditional(_t)?|underlying_type(_t)?|invoke_result(_t)?|void_t)\b",
    "initializer_list": r"\binitializer_list\b",
    "iterator": r"\b(back_inserter|inserter|istreambuf_iterator|ostreambuf_iterator|next|prev|advance|distance|begin|end|make_move_iterator|iterator_traits|ostream_iterator|istream_iterator|reverse_iterator)\b",
    "utility": r"\b(move|forward|pair|make_pair|swap|exchange|declval|as_const|in_place|index_sequence|integer_sequence|to_underlying)\b",
    "cmath": r"\b(sqrt|pow|floor|ceil|round|lround|llround|fabs|abs|log|log2|log10|exp|isnan|isinf|isfinite|fmod|trunc)\b",
    "ctime": r"\b(time_t|tm|time|localtime_r|gmtime_r|strftime|mktime|timegm|clock_gettime|timespec)\b",
    "time.h": r"\b(time_t|tm|time|localtime_r|gmtime_r|strftime|mktime|timegm|clock_gettime|timespec|nanosleep|CLOCK_\w+)\b",
    "cctype": r"\b(isalpha|isdigit|isalnum|isspace|isupper|islower|isprint|iscntrl|isxdigit|ispunct|toupper|tolower)\b",
    "cstring": r"\b(strlen|strcmp|strncmp|memcpy|memset|memcmp|memmove|strerror|strchr|strrchr|strstr|strncpy|strcpy|strsignal|strerror_r|memchr)\b",
    "cerrno": r"\b(errno|E[A-Z0-9]{2,})\b",
    "csignal": r"\b(SIG[A-Z0-9]+|signal|raise|sig_atomic_t|sigaction|kill|sigset_t)\b",
    "signal.h": r"\b(SIG[A-Z0-9]+|signal|raise|sig_atomic_t|sigaction|kill|sigset_t|sigemptyset|sigaddset|sigprocmask|pthread_sigmask|sigfillset|sigtimedwait|sigwait\w*|killpg|siginfo_t|sigdelset|sigismember)\b",
    "poll.h": r"\b(poll|pollfd|POLL[A-Z]+|ppoll|nfds_t)\b",
    "fcntl.h": r"\b(open|openat|fcntl|O_[A-Z]+|F_[A-Z]+|FD_CLOEXEC|AT_[A-Z_]+|creat|posix_fadvise)\b",
    "sys/wait.h": r"\b(wait|waitpid|waitid|W[A-Z]+|idtype_t|P_[A-Z]+)\b",
    "sys/eventfd.h": r"\beventfd(_t|_read|_write)?\b|\bEFD_",
    "sys/socket.h": r"\b(socket|bind|listen|accept4?|connect|send|recv|sendmsg|recvmsg|setsockopt|getsockopt|shutdown|socketpair|sockaddr|socklen_t|SOCK_\w+|AF_\w+|SOL_\w+|SO_\w+|MSG_\w+|SHUT_\w+|getsockname|getpeername|cmsghdr|CMSG_\w+|msghdr)\b",
    "sys/un.h": r"\bsockaddr_un\b",
    "netinet/in.h": r"\b(sockaddr_in6?|htons|ntohs|htonl|ntohl|INADDR_\w+|IPPROTO_\w+|in_addr|in6_addr|in_port_t)\b",
    "arpa/inet.h": r"\b(inet_\w+|htons|ntohs|htonl|ntohl)\b",
    "sys/stat.h": r"\b(stat|fstat|lstat|fstatat|chmod|fchmod|mkdir|umask|S_I\w+|S_IS\w+|mode_t|mkfifo)\b",
    "sys/file.h": r"\b(flock|LOCK_[A-Z]+)\b",
    "sys/random.h": r"\bgetrandom\b|\bGRND_",
    "sys/mman.h": r"\b(mmap|munmap|PROT_\w+|MAP_\w+|mprotect|msync|memfd_create|MFD_\w+)\b",
    "sys/prctl.h": r"\b(prctl|PR_\w+)\b",
    "sys/syscall.h": r"\b(syscall|SYS_\w+)\b",
    "spawn.h": r"\bposix_spawn\w*\b",
    "dirent.h": r"\b(opendir|readdir|closedir|DIR|dirent|fdopendir|dirfd)\b",
    "sched.h": r"\b(sched_\w+|CLONE_\w+|unshare|setns|cpu_set_t|CPU_\w+)\b",
    "cstdio": r"\b(printf|fprintf|snprintf|sprintf|fputs|fwrite|fread|fopen|fclose|fflush|FILE|stdout|stderr|stdin|puts|putchar|perror|fgets|getline|popen|pclose|fileno|dprintf|remove|rename|vsnprintf|EOF|BUFSIZ|setvbuf|_IONBF|_IOLBF|fdopen|tmpfile|fputc|getc|fgetc|std::rename)\b",
    "cstdlib": r"\b(getenv|setenv|unsetenv|exit|_Exit|abort|atoi|atol|atoll|strtol|strtoul|strtoll|strtoull|strtod|malloc|free|calloc|realloc|system|EXIT_\w+|mkstemp|mkdtemp|realpath|abs|qsort|rand|srand|atexit|quick_exit|clearenv|putenv|secure_getenv|div|llabs)\b",
    "cstdint": r"\b(u?int(8|16|32|64|ptr|max)_t|U?INT\d*_(MAX|MIN|C))\b",
    "cstddef": r"\b(size_t|ptrdiff_t|nullptr_t|byte|max_align_t|offsetof)\b",
    "unistd.h": r"\b(read|write|close|pipe2?|fork|vfork|execvp?e?|execl\w*|_exit|getpid|getppid|getpgid|setpgid|setsid|getsid|dup2?|dup3|access|unlink|unlinkat|chdir|fchdir|getcwd|isatty|sleep|usleep|lseek|fsync|fdatasync|ftruncate|truncate|getuid|geteuid|getgid|getegid|sysconf|_SC_\w+|pid_t|uid_t|gid_t|ssize_t|off_t|readlink|readlinkat|symlink|rmdir|link|tcgetpgrp|tcsetpgrp|gethostname|R_OK|W_OK|X_OK|F_OK|STDIN_FILENO|STDOUT_FILENO|STDERR_FILENO|environ|pathconf|alarm|pause|getlogin_r|ttyname_r|nice|getopt|optarg|SEEK_\w+|syncfs|sync|faccessat|getresuid|getpgrp|chown|fchown|lchown|execve|copy_file_range)\b",
    "algorithm": r"\b(sort|stable_sort|find|find_if|find_if_not|count|count_if|any_of|all_of|none_of|min|max|minmax|clamp|remove|remove_if|unique|reverse|copy|copy_if|copy_n|fill|fill_n|transform|equal|lower_bound|upper_bound|binary_search|max_element|min_element|for_each|replace|replace_if|search|mismatch|partition|nth_element|set_difference|set_intersection|set_union|includes|rotate|swap_ranges|generate|iota|erase|erase_if|ranges|lexicographical_compare|adjacent_find|shuffle|sample|is_sorted|merge|partial_sort|stable_partition|is_permutation|next_permutation|starts_with|ends_with|contains|find_end|search_n)\b",
    "numeric": r"\b(accumulate|iota|reduce|inner_product|partial_sum|gcd|lcm|adjacent_difference|transform_reduce)\b",
    "limits": r"\bnumeric_limits\b",
    "charconv": r"\b(from_chars|to_chars|chars_format)\b",
    "string": r"\b(string|to_string|getline|stoi|stol|stoul|stoll|stoull|stod|wstring|u8string|char_traits|basic_string)\b",
    "exception": r"\b(exception|exception_ptr|current_exception|rethrow_exception|make_exception_ptr|terminate|set_terminate|uncaught_exceptions|nested_exception)\b",
    "tuple": r"\b(tuple|make_tuple|tie|get|apply|tuple_size|forward_as_tuple|ignore)\b",
    "cassert": r"\bassert\b",
    "climits": r"\b(INT_MAX|INT_MIN|LONG_MAX|LONG_MIN|CHAR_BIT|PATH_MAX|UINT_MAX|LLONG_MAX|SIZE_MAX|ULONG_MAX)\b",
    "termios.h": r"\b(termios|tcgetattr|tcsetattr|cfmakeraw|TCSA\w+|ECHO\w*|ICANON|winsize)\b",
    "sys/ioctl.h": r"\b(ioctl|TIOC\w+|winsize|FIONREAD)\b",
    "pwd.h": r"\b(getpwuid(_r)?|getpwnam(_r)?|passwd)\b",
    "grp.h": r"\b(getgrgid(_r)?|getgrnam(_r)?|group|setgroups|initgroups)\b",
    "sys/resource.h": r"\b(getrlimit|setrlimit|rlimit|RLIMIT_\w+|getrusage|rusage|RUSAGE_\w+|setpriority|getpriority|PRIO_\w+)\b",
    "sys/time.h": r"\b(timeval|gettimeofday|settimeofday|itimerval|setitimer|ITIMER_\w+|timersub|timeradd|utimes)\b",
    "sys/types.h": r"\b(pid_t|uid_t|gid_t|ssize_t|off_t|mode_t|dev_t|ino_t|id_t|key_t|size_t)\b",
    "sys/inotify.h": r"\binotify_\w+|\bIN_[A-Z_]+",
    "sys/signalfd.h": r"\bsignalfd(_siginfo)?\b|\bSFD_",
    "sys/timerfd.h": r"\btimerfd_\w+|\bTFD_",
    "sys/epoll.h": r"\bepoll_\w+|\bEPOLL\w+",
    "sys/pidfd.h": r"\bpidfd_\w+",
    "linux/limits.h": r"\bPATH_MAX\b",
    "sys/utsname.h": r"\b(uname|utsname)\b",
    "sys/statvfs.h": r"\b(statvfs|fstatvfs)\b",
    "pty.h": r"\b(openpty|forkpty)\b",
    "netdb.h": r"\b(getaddrinfo|freeaddrinfo|addrinfo|gai_strerror|gethostbyname|AI_\w+|NI_\w+|getnameinfo)\b",
    "netinet/tcp.h": r"\bTCP_\w+",
    "ifaddrs.h": r"\b(getifaddrs|freeifaddrs|ifaddrs)\b",
    "stdlib.h": r"\b(getenv|setenv|unsetenv|exit|malloc|free|mkstemp|mkdtemp|realpath|system|EXIT_\w+|clearenv|posix_openpt|grantpt|unlockpt|ptsname(_r)?)\b",
    "string.h": r"\b(strlen|strcmp|memcpy|memset|strerror|strsignal|memcmp|strncmp|strchr)\b",
    "errno.h": r"\b(errno|E[A-Z0-9]{2,})\b",
    "stdio.h": r"\b(printf|fprintf|snprintf|FILE|stdout|stderr|fflush|perror|fileno|dprintf)\b",
    "locale.h": r"\b(setlocale|LC_\w+|newlocale|uselocale|freelocale)\b",
    "clocale": r"\b(setlocale|LC_\w+)\b",
    "source_location": r"\bsource_location\b",
    "bit": r"\b(bit_cast|popcount|countl_zero|countr_zero|has_single_bit|bit_width|rotl|rotr|endian)\b",
    "compare": r"\b(strong_ordering|weak_ordering|partial_ordering|three_way_comparable|compare_three_way)\b|<=>",
    "concepts": r"\b(same_as|convertible_to|integral|floating_point|derived_from|invocable|constructible_from)\b",
    "ranges": r"\branges\b|\bviews\b",
    "ostream": r"\bostream\b",
    "istream": r"\bistream\b",
    "iosfwd": r"\b(ostream|istream)\b",
    "iomanip": r"\b(setw|setfill|setprecision|put_time|get_time|quoted|hex|dec)\b",
    "queue": r"\b(queue|priority_queue)\b",
    "stack": r"\bstack\b",
    "list": r"\blist\b",
    "forward_list": r"\bforward_list\b",
    "bitset": r"\bbitset\b",
    "any": r"\b(any|any_cast|make_any)\b",
    "cinttypes": r"\bPRI[diuxX]\w*\b|\bstrtoimax\b",
    "semaphore": r"\b(counting_semaphore|binary_semaphore)\b",
    "latch": r"\blatch\b",
    "barrier": r"\bbarrier\b",
    "stop_token": r"\b(stop_token|stop_source|stop_callback)\b",
    "numbers": r"\bnumbers\b",
    "format": r"\bformat\b",
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"](.*)$')


def strip(text):
    """The text without comments, string literals' contents kept (names in them do not count)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'R"([^(\s]*)\((.*?)\)\1"', '""', text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return text


DECL_PATTERNS = [
    r"\b(?:class|struct|union|enum(?:\s+class|\s+struct)?|concept)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)",
    r"\busing\s+([A-Za-z_]\w*)\s*=",
    r"\btypedef\b[^;]*?\b([A-Za-z_]\w*)\s*;",
    r"^\s*#\s*define\s+([A-Za-z_]\w*)",
    r"\bnamespace\s+([A-Za-z_]\w*)\s*=",
    # functions and operators: a name before '(' that is not a keyword of a statement
    r"([A-Za-z_]\w*)\s*\(",
    # variables and constants at any scope: `Type name =`, `Type name{`, `Type name;`
    r"\b(?:constexpr|constinit|extern|inline|static|const)\b[^;(){}=]*?\b([A-Za-z_]\w*)\s*(?:=|\{|;|\[)",
]
KEYWORDS = set("""if for while switch return sizeof alignof decltype catch static_assert noexcept
    requires template operator throw new delete defined explicit constexpr const static inline
    typename void int bool char auto unsigned long short double float signed struct class enum
    namespace using public private protected virtual override final default std""".split())


def enumerators(text):
    """The enumerators of every enum in the text."""
    names = set()
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", text, flags=re.S):
        for part in body.split(","):
            m = re.match(r"\s*([A-Za-z_]\w*)", part)
            if m:
                names.add(m.group(1))
    return names


def declared(path, cache={}):
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip(f.read())
    names = set()
    for pat in DECL_PATTERNS:
        for m in re.finditer(pat, text, flags=re.M):
            names.add(m.group(1))
    names |= enumerators(text)
    for decl in re.findall(r"\bextern\b([^;]*);", text):  # extern const Operation a, b, c;
        names |= set(re.findall(r"([A-Za-z_]\w*)\s*(?:,|$)", decl))
    names -= KEYWORDS
    cache[path] = names
    return names


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = []
    for d in DIRS:
        base = os.path.join(root, d)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [x for x in dirnames if x != "node_modules"]
            for name in filenames:
                if name.endswith((".cpp", ".hpp", ".h")):
                    files.append(os.path.join(dirpath, name))
    if len(files) < 50:
        print(f"only {len(files)} files under {root}: is it the source tree?")
        return 1
    std_res = {k: re.compile(v) for k, v in STD.items()}
    unused = []
    for path in sorted(files):
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = f.read()
        body = strip("\n".join(l for l in raw.split("\n") if not INCLUDE.match(l)))
        words = set(re.findall(r"[A-Za-z_]\w*", body))
        own = os.path.splitext(os.path.basename(path))[0]
        for line in raw.split("\n"):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target, rest = m.groups()
            if "IWYU pragma: keep" in rest or "IWYU pragma: export" in rest:
                continue
            rel = os.path.relpath(path, root)
            if kind == "<":
                rx = std_res.get(target)
                if rx and not rx.search(body):
                    unused.append(f"{rel}: #include <{target}>")
                continue
            header = None
            for cand in (os.path.join(os.path.dirname(path), target), os.path.join(root, target),
                         os.path.join(root, "tests", target)):
                if os.path.isfile(cand):
                    header = os.path.normpath(cand)
                    break
            if header is None:
                continue  # generated at build time (version, embedded page)
            if os.path.splitext(os.path.basename(header))[0] == own:
                continue
            names = declared(header)
            if names and not (names & words):
                unused.append(f'{rel}: #include "{target}"')
    if unused:
        print(f"{len(unused)} includes name nothing the file uses (remove them, or mark one kept "
              "for what it brings with `// IWYU pragma: keep`):")
        for u in unused:
            print("  " + u)
        return 1
    print(f"{len(files)} files: every include is used")
    return 0


if __name__ == "__main__":
    sys.exit(main())
