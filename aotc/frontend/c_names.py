"""C names: which names may become C symbols (C/C++ identifiers and keywords, model prefixes
that would clash with the runtime or the C library), and unique C identifiers derived from HLO
names. It knows nothing of configs or modules beyond the names it is given."""
from __future__ import annotations

import re

C_KEYWORDS = frozenset(
    # C11
    "auto break case char const continue default do double else enum extern float for goto if inline "
    "int long register restrict return short signed sizeof static struct switch typedef union "
    "unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary "
    "_Noreturn _Static_assert _Thread_local "
    # C++ (the optional wrapper class uses the same names)
    "alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl "
    "concept consteval constexpr constinit const_cast co_await co_return co_yield decltype delete "
    "dynamic_cast explicit export false friend mutable namespace new noexcept not not_eq nullptr "
    "operator or or_eq private protected public reinterpret_cast requires static_assert "
    "static_cast template this thread_local throw true try typeid typename using virtual wchar_t "
    "xor xor_eq".split()
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def identifier_problem(name: str) -> str | None:
    """Why `name` cannot be a C identifier, or None if it can."""
    if not _IDENT.match(name):
        return f"'{name}' is not a C identifier"
    if name in C_KEYWORDS:
        return f"'{name}' is a C/C++ keyword"
    return None


# The functions a model's prefix P gets (P_create, P_run, ...), and the C library, POSIX
# threads and C11 threads functions one of them would be for some prefix: a model named
# `pthread` would define pthread_create.
API_SUFFIXES = ("create", "destroy", "run", "run_with", "error_msg", "set_num_threads", "set_parallel_for",
                "arg_data", "set_arg_data", "result_data", "set_result_data", "set_arena", "lookup_arg_index",
                "lookup_result_index", "arg_name", "arg_type", "arg_rank", "arg_dims", "arg_bytes",
                "arg_is_variable", "set_deadline", "cancel", "result_name", "result_type", "result_rank", "result_dims", "result_bytes",
                "instance", "alloc_mode", "parallel_for_fn")
SYSTEM_SYMBOLS = frozenset((
    "pthread_create pthread_key_create pthread_attr_destroy pthread_mutex_destroy pthread_mutexattr_destroy "
    "pthread_cond_destroy pthread_condattr_destroy pthread_rwlock_destroy pthread_rwlockattr_destroy "
    "pthread_barrier_destroy pthread_barrierattr_destroy pthread_spin_destroy sem_destroy timer_create "
    "thrd_create mtx_destroy cnd_destroy tss_create posix_spawnattr_destroy posix_spawn_file_actions_destroy "
    "pthread_attr_destroy pthread_cancel").split())


def prefix_problem(name: str) -> str | None:
    """Why `name` cannot prefix a model's C symbols (P_create, P_instance, ...), or None."""
    bad = identifier_problem(name)
    if bad:
        return bad
    if name.startswith("_"):
        return f"'{name}' begins with an underscore (reserved for the C implementation)"
    if name.lower().startswith("aotc"):
        return f"'{name}' would clash with the embedded runtime's aotc_* names"
    clash = [f"{name}_{s}" for s in API_SUFFIXES if f"{name}_{s}" in SYSTEM_SYMBOLS]  # in API order
    if clash:
        return f"'{name}' would define {clash[0]}, a C library function"
    return None


_SUFFIX = re.compile(r"\.\d+\Z")


def c_name(hlo_name: str) -> str:
    """`x.1` -> `x_1`: any HLO name as a C identifier."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", hlo_name) or "v"
    if s[0].isdigit():
        s = "_" + s
    return s + "_" if s in C_KEYWORDS else s


def derive_names(hlo_names: list[str], taken: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Unique C identifiers for HLO names: `x.1` -> `x` when no other name strips to `x`,
    else `x_1`; remaining collisions (with each other or `taken`) get `_2`, `_3`, ..."""
    bases = [c_name(_SUFFIX.sub("", n)) for n in hlo_names]
    counts: dict[str, int] = {}
    for b in bases:
        counts[b] = counts.get(b, 0) + 1
    used = set(taken)
    out = []
    for n, b in zip(hlo_names, bases):
        cand = b if counts[b] == 1 and b not in used else c_name(n)
        out.append(unique_name(cand, used))
    return out


def unique_name(cand: str, used: set[str]) -> str:
    """`cand`, or `cand_2`, `cand_3`, ... : the first not in `used` (which it joins)."""
    name, k = cand, 2
    while name in used:
        name, k = f"{cand}_{k}", k + 1
    used.add(name)
    return name
