"""Shared machinery of the end-to-end tests: fixture loading, the comparison
helper, the session cache of compiled models and the case parametrization.

Expected values come from tests/data/{fixtures,corpus}, computed by XLA:CPU
(tests/fixtures/gen_fixtures.py); nothing here computes them. Tests request
`op_case`, `model_case` or `corpus_case` and are parametrized over every case
directory by `pytest_generate_tests`.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FIXTURES = ROOT / "tests" / "data" / "fixtures"
CORPUS = ROOT / "tests" / "data" / "corpus"

# The op set aotc's core supports; a corpus case runs when its ops are a subset.
CORE_OPS = frozenset("""
    abs negate sign exponential exponential-minus-one log log-plus-one sqrt rsqrt cbrt tanh
    logistic sine cosine tan erf floor ceil round-nearest-afz round-nearest-even is-finite not
    popcnt count-leading-zeros real imag
    add subtract multiply divide remainder power maximum minimum atan2 and or xor shift-left
    shift-right-logical shift-right-arithmetic
    compare select clamp convert
    broadcast reshape transpose slice concatenate pad iota reverse dot reduce
""".split())
STRUCTURAL_OPS = frozenset("parameter constant tuple get-tuple-element call fusion bitcast copy "
                           "complex".split())

_NP_TYPES = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32,
             "s64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
             "u64": np.uint64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
             "f32": np.float32, "f64": np.float64, "c64": np.complex64,
             "c128": np.complex128}


def np_dtype(type_name: str) -> np.dtype:
    return np.dtype(_NP_TYPES[type_name])


def from_npz(a: np.ndarray, type_name: str | None) -> np.ndarray:
    """An array as stored in a fixture .npz -> its real dtype (bf16 is kept as uint16 bits)."""
    a = np.asarray(a)
    if type_name is None:
        return a
    want = np_dtype(type_name)
    if a.dtype == want:
        return a
    if type_name == "bf16" and a.dtype == np.uint16:
        return a.view(want)
    return a.astype(want)


# ------------------------------------------------------------------ comparison

def _fmt_idx(flat_index: int, shape) -> str:
    return str(tuple(int(i) for i in np.unravel_index(flat_index, shape))) if shape else "()"


def assert_close(actual, expected, rtol: float, atol: float, name: str,
                 signed_zeros: bool = False) -> None:
    """Assert one output matches XLA's.

    Integers and pred must be equal. For floats: NaN positions must match, +-inf
    must match exactly, finite values satisfy |a - e| <= atol + rtol * |e|, and
    with signed_zeros a zero must carry XLA's sign. Complex values are checked
    part by part. bf16 expected arrays may be given as uint16 bits."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if expected.dtype == np.uint16 and actual.dtype.name == "bfloat16":
        expected = expected.view(ml_dtypes.bfloat16)
    if actual.shape != expected.shape:
        raise AssertionError(f"{name}: shape {actual.shape} != expected {expected.shape}")
    if actual.dtype != expected.dtype:
        raise AssertionError(f"{name}: dtype {actual.dtype} != expected {expected.dtype}")
    if expected.dtype.kind == "c":
        assert_close(actual.real, expected.real, rtol, atol, name + ".real", signed_zeros)
        assert_close(actual.imag, expected.imag, rtol, atol, name + ".imag", signed_zeros)
        return
    shape = expected.shape
    a_flat, e_flat = actual.reshape(-1), expected.reshape(-1)
    if expected.dtype.kind in "biu":
        bad = np.flatnonzero(a_flat != e_flat)
        if bad.size:
            rows = ", ".join(f"{_fmt_idx(i, shape)}: got {a_flat[i]!r} want {e_flat[i]!r}"
                             for i in bad[:6])
            raise AssertionError(f"{name}: {bad.size} of {e_flat.size} elements differ "
                                 f"(exact {expected.dtype}); {rows}")
        return
    a = a_flat.astype(np.float64)
    e = e_flat.astype(np.float64)
    a_nan, e_nan = np.isnan(a), np.isnan(e)
    problems = []
    bad_nan = np.flatnonzero(a_nan != e_nan)
    if bad_nan.size:
        problems.append(("NaN positions differ", bad_nan))
    both = ~a_nan & ~e_nan
    bad_inf = np.flatnonzero(both & (np.isinf(a) | np.isinf(e)) & (a != e))
    if bad_inf.size:
        problems.append(("+-inf differs", bad_inf))
    fin = both & np.isfinite(a) & np.isfinite(e)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(fin, np.abs(a - e), 0.0)
        bad_val = np.flatnonzero(fin & (err > atol + rtol * np.abs(e)))
    if bad_val.size:
        problems.append((f"outside rtol={rtol:g} atol={atol:g}", bad_val))
    if signed_zeros:
        bad_sz = np.flatnonzero(fin & (a == 0) & (e == 0) & (np.signbit(a) != np.signbit(e)))
        if bad_sz.size:
            problems.append(("sign of zero differs", bad_sz))
    if problems:
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(fin & (e != 0), err / np.abs(e), 0.0)
        lines = [f"{name}: {expected.dtype}{list(shape)} does not match XLA "
                 f"(max abs err {err.max() if err.size else 0:.3g}, "
                 f"max rel err {rel.max() if rel.size else 0:.3g})"]
        for what, idx in problems:
            rows = ", ".join(f"{_fmt_idx(i, shape)}: got {a_flat[i]!r} want {e_flat[i]!r}"
                             for i in idx[:6])
            lines.append(f"  {what} at {idx.size} element(s): {rows}")
        raise AssertionError("\n".join(lines))


# ------------------------------------------------------------------ cases

@dataclass(frozen=True)
class FixtureCase:
    """One directory of model.hlo, cfg.yaml, inputs.npz, expected.npz, meta.json."""
    dir: Path

    @property
    def name(self) -> str:
        return self.dir.name

    @property
    def model_path(self) -> Path:
        return self.dir / "model.hlo"

    @property
    def cfg_path(self) -> Path:
        return self.dir / "cfg.yaml"

    @cached_property
    def meta(self) -> dict:
        return json.loads((self.dir / "meta.json").read_text())

    @cached_property
    def cfg(self) -> dict:
        return yaml.safe_load(self.cfg_path.read_text())

    @property
    def feeds(self) -> list[dict]:
        return sorted(self.cfg.get("feeds", []), key=lambda f: int(f["id"]))

    @property
    def fetches(self) -> list[dict]:
        """Fetches in root-tuple order, each with its HLO type (from meta.json)."""
        types = {int(f["id"]): f.get("type") for f in self.meta.get("fetches", [])}
        out = []
        for f in sorted(self.cfg.get("fetches", []), key=lambda f: int(f["id"])):
            out.append({**f, "type": f.get("type") or types.get(int(f["id"]))})
        return out

    @property
    def rtol(self) -> float:
        return float(self.meta.get("rtol", 0.0))

    @property
    def atol(self) -> float:
        return float(self.meta.get("atol", 0.0))

    @property
    def signed_zeros(self) -> bool:
        return bool(self.meta.get("signed_zeros", False))

    def inputs(self) -> list[np.ndarray]:
        """Feed arrays in feed order, with their real dtypes (bf16 as ml_dtypes.bfloat16)."""
        z = np.load(self.dir / "inputs.npz")
        return [from_npz(z[f["name"]], f.get("type")) for f in self.feeds]

    def input_dict(self) -> dict[str, np.ndarray]:
        return {f["name"]: a for f, a in zip(self.feeds, self.inputs())}

    def expected(self) -> dict[str, np.ndarray]:
        z = np.load(self.dir / "expected.npz")
        return {f["name"]: from_npz(z[f["name"]], f.get("type")) for f in self.fetches}

    def check(self, outputs, label: str = "") -> None:
        """Compare outputs (a list in fetch order, or a dict by fetch name) with
        expected.npz; reports every mismatching fetch at once."""
        expected = self.expected()
        names = [f["name"] for f in self.fetches]
        if isinstance(outputs, dict):
            missing = [n for n in names if n not in outputs]
            assert not missing, f"{self.name}: missing fetches {missing}"
            outputs = [outputs[n] for n in names]
        outputs = list(outputs)
        assert len(outputs) == len(names), \
            f"{self.name}: {len(outputs)} outputs, expected {len(names)} ({names})"
        errors = []
        for n, got in zip(names, outputs):
            try:
                assert_close(got, expected[n], self.rtol, self.atol, f"{self.name}/{n}",
                             self.signed_zeros)
            except AssertionError as e:
                errors.append(str(e))
        if errors:
            why = self.meta.get("reason", "")
            raise AssertionError((f"[{label}] " if label else "") + "\n".join(errors)
                                 + (f"\n(tolerance reason: {why})" if why else ""))


def list_cases(root: Path, category: str | None = None) -> list[FixtureCase]:
    out = []
    if not root.is_dir():
        return out
    for d in sorted(root.iterdir()):
        if not (d / "meta.json").is_file():
            continue
        c = FixtureCase(d)
        if category is None or c.meta.get("category", "op") == category:
            out.append(c)
    return out


def corpus_core_cases() -> list[FixtureCase]:
    """Corpus cases whose ops are all within the core set (plus structure ops)."""
    allowed = CORE_OPS | STRUCTURAL_OPS
    return [c for c in list_cases(CORPUS) if set(c.meta.get("ops", [])) <= allowed]


def corpus_all_cases() -> list[FixtureCase]:
    """Every corpus case (control flow, gather, scatter, sort, convolution, ... included)."""
    return list_cases(CORPUS)


def live_sample(cases: list[FixtureCase], every: int = 8) -> list[FixtureCase]:
    """A deterministic sample for the live-XLA variant: every n-th case plus a few
    that exercise the least common paths."""
    always = {"compare_totalorder_f32", "chain10_f32", "convert_from_f32", "logistic_op_f32",
              "reduce_argmax_f32", "dot_bf16_preferred_f32"}
    return [c for i, c in enumerate(cases) if i % every == 0 or c.name in always]


# ------------------------------------------------------------------ aotc access

def require_aotc(*attrs: str):
    """The aotc module, or skip when its Python API is not there (yet)."""
    import aotc
    missing = [a for a in attrs if not hasattr(aotc, a)]
    if missing:
        pytest.skip(f"aotc Python API lacks {', '.join('aotc.' + a for a in missing)}")
    return aotc


def require_jax():
    try:
        import jax  # noqa: F401
    except Exception as e:  # ImportError or a broken install
        pytest.skip(f"jax is not importable ({type(e).__name__}: {e}); live XLA checks need it")


def have_aarch64() -> tuple[bool, str]:
    missing = [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64") if shutil.which(t) is None]
    return (not missing, "missing " + " and ".join(missing) if missing else "")


# ------------------------------------------------------------------ run settings

# The thread counts every op-table case runs with (the pool splits work from 2 on).
OP_TABLE_THREADS = (1, 2)


# ------------------------------------------------------------------ user compiler flags

# The flags a user's build may pass to the generated .c: each optimization level and
# the user-style `-O2 -march=native`, under gcc and clang, with aotc's own relaxations
# undone (-ftrapping-math -fmath-errno). Results must not depend on them.
USER_FLAGS = {"O1": ("-O1", ()), "O2": ("-O2", ()), "O3": ("-O3", ()), "Os": ("-Os", ()),
              "O2-native": ("-O2", ("-march=native",))}
FLAG_MATRIX = [(cc, f) for cc in ("gcc", "clang") for f in USER_FLAGS]


def rotated_flag_sets(index: int, per_compiler: int) -> list[tuple[str, str]]:
    """`per_compiler` flag sets of gcc and as many of clang for the case at `index` (cases
    in name order): the sets rotate over the cases, clang's two ahead of gcc's, so every
    set of both compilers builds an equal share of the cases and adjacent cases (the
    dtype variants of one op) land on different sets."""
    sets = list(USER_FLAGS)
    return [(cc, sets[(index * per_compiler + k + offset) % len(sets)])
            for cc, offset in (("gcc", 0), ("clang", 2)) for k in range(per_compiler)]


def flag_matrix_params(config, cases, per_compiler: int) -> tuple[list, list]:
    """(case, cc, flags) parameters and their ids: `rotated_flag_sets` over `cases` in name
    order, or every flag set a case with `--flag-matrix=full`."""
    full = config.getoption("flag_matrix") == "full"
    params, ids = [], []
    for i, case in enumerate(sorted(cases, key=lambda c: c.name)):
        for cc, flags in (FLAG_MATRIX if full else rotated_flag_sets(i, per_compiler)):
            params.append((case, cc, flags))
            ids.append(f"{case.name}-{cc}-{flags}")
    return params, ids


def user_flag_options(cc: str, flags: str):
    """The CompileOptions of one (compiler, flag set) of FLAG_MATRIX."""
    from aotc.options import CompileOptions

    opt, extra = USER_FLAGS[flags]
    return CompileOptions(cc=cc, opt_level=opt, cflags=("-ftrapping-math", "-fmath-errno", *extra))


def user_flag_label(cc: str, flags: str) -> str:
    opt, extra = USER_FLAGS[flags]
    return " ".join((cc, opt, *extra))


# ------------------------------------------------------------------ builds

def _compile(case: FixtureCase, out_dir: Path, options=None) -> tuple[str, str]:
    """Compile with aotc's default options (options None) or with `options` (its `emit`
    is replaced) into `out_dir`: (shared library path, header path)."""
    aotc = require_aotc("compile", "load", "CompileOptions")
    # the default build: one C compile gives both the object file and the shared library
    options = aotc.CompileOptions(emit=("o", "so")) if options is None else replace(options, emit=("so",))
    out_dir.mkdir(parents=True, exist_ok=True)
    res = aotc.compile(str(case.model_path), config=str(case.cfg_path),
                       out=str(out_dir / f"lib{case.name}"), options=options)
    return res.so_path, res.h_path


def _options_dir(options) -> str:
    return "default" if options is None else "opts-" + hashlib.sha256(repr(options).encode()).hexdigest()[:12]


class ModelCache:
    """Compiles each (case, CompileOptions) once per session and loads it once per
    process. With pytest-xdist the workers share the builds: `root` is the session's
    common temporary directory, and a build is claimed by creating its claim file
    (O_EXCL), so whichever worker claims it compiles it and any worker that runs a test
    of it waits for the outcome and loads the library. Each worker compiles the builds
    its selected tests need ahead, in test order, on `workers` threads (the C compiler
    dominates and runs outside the GIL), skipping those another worker has claimed: a
    worker cannot know which tests it will be handed, so each build in the list is
    compiled by the first worker to reach it, never twice. A failed build is recorded
    with its error, so every test of it reports the same error without recompiling.
    `ahead` holds cases, or (case, options) pairs."""

    WAIT_SECONDS = 1800  # a build claimed by another worker and never finished: that worker died

    def __init__(self, root: Path, ahead=(), workers: int = 2):
        self.root = root
        self._claims = root / "claims"
        self._claims.mkdir(parents=True, exist_ok=True)
        self._loaded: dict[tuple, object] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="aotc-build")
        for item in ahead:
            case, options = item if isinstance(item, tuple) else (item, None)
            self._pool.submit(self._build_if_unclaimed, case, options)

    def _key(self, case: FixtureCase, options) -> str:
        return f"{_options_dir(options)}--{case.name}"

    def _build_if_unclaimed(self, case: FixtureCase, options) -> None:
        """Claim and compile the build unless some worker claimed it."""
        key = self._key(case, options)
        try:
            fd = os.open(self._claims / f"{key}.claim", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return
        os.close(fd)
        try:
            so, h = _compile(case, self.root / _options_dir(options) / case.name, options)
            outcome, text = "built", json.dumps({"so": so, "h": h})
        except pytest.skip.Exception as e:
            outcome, text = "skipped", str(e)
        except Exception as e:  # noqa: BLE001 -- recorded for the tests of this build
            outcome, text = "failed", f"{type(e).__name__}: {e}"
        tmp = self._claims / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(text)
        os.replace(tmp, self._claims / f"{key}.{outcome}")

    def _outcome(self, case: FixtureCase, options) -> tuple[str, str]:
        key = self._key(case, options)
        self._build_if_unclaimed(case, options)
        deadline = time.monotonic() + self.WAIT_SECONDS
        while True:
            for outcome in ("built", "failed", "skipped"):
                path = self._claims / f"{key}.{outcome}"
                if path.exists():
                    return outcome, path.read_text()
            if time.monotonic() > deadline:
                return "failed", f"no outcome after {self.WAIT_SECONDS} s (the worker building it stopped)"
            time.sleep(0.05)

    def _load(self, case: FixtureCase, options):
        from aotc.toolchain.loader import load_library

        outcome, text = self._outcome(case, options)
        if outcome == "skipped":
            pytest.skip(text)
        if outcome == "failed":
            raise AssertionError(f"{case.name}: compile/load failed: {text}")
        paths = json.loads(text)
        try:
            return load_library(paths["so"], paths["h"])
        except Exception as e:
            raise AssertionError(f"{case.name}: compile/load failed: {type(e).__name__}: {e}") from e

    def get(self, case: FixtureCase, options=None):
        """The loaded model of `case`, built with aotc's defaults or with `options`, loaded
        once in this process."""
        require_aotc("compile", "load", "CompileOptions")
        key = self._key(case, options)
        with self._lock:
            model = self._loaded.get(key)
        if model is None:
            model = self._load(case, options)
            with self._lock:
                model = self._loaded.setdefault(key, model)
        return model

    def take(self, case: FixtureCase, options=None):
        """The model of a build used by one test only, loaded for it: the caller closes it
        and may delete its directory (`Path(model.path).parent`). The flag matrix builds
        every case several times; they must not all stay loaded."""
        require_aotc("compile", "load", "CompileOptions")
        return self._load(case, options)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def shared_root(tmp_path_factory, name: str) -> Path:
    """A directory every xdist worker of this session sees (the session's base temporary
    directory's parent under xdist, the base itself otherwise)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    root.mkdir(parents=True, exist_ok=True)
    return root


_AHEAD: list[FixtureCase] = []


def pytest_collection_finish(session):
    """Remember, in test order, the cases whose selected tests compile a model."""
    seen = set()
    _AHEAD.clear()
    for item in session.items:
        spec = getattr(item, "callspec", None)
        if spec is None or "models" not in getattr(item, "fixturenames", ()):
            continue
        for key in ("op_case", "model_case"):
            case = spec.params.get(key)
            if case is not None and case.name not in seen:
                seen.add(case.name)
                _AHEAD.append(case)


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    try:
        import aotc
        ahead = _AHEAD if all(hasattr(aotc, a) for a in ("compile", "load")) else []
    except Exception:
        ahead = []
    cache = ModelCache(shared_root(tmp_path_factory, "aotc_models"), ahead)
    yield cache
    cache.close()


# ------------------------------------------------------------------ parametrization

def _ids(cases):
    return [c.name for c in cases]


def pytest_generate_tests(metafunc):
    if "op_case" in metafunc.fixturenames:
        cases = list_cases(FIXTURES, "op")
        if metafunc.definition.get_closest_marker("jax"):
            cases = live_sample(cases)
        metafunc.parametrize("op_case", cases, ids=_ids(cases))
    if "model_case" in metafunc.fixturenames:
        cases = list_cases(FIXTURES, "model")
        metafunc.parametrize("model_case", cases, ids=_ids(cases))
    if "fixture_case" in metafunc.fixturenames:
        cases = list_cases(FIXTURES)
        metafunc.parametrize("fixture_case", cases, ids=_ids(cases))
    if "corpus_case" in metafunc.fixturenames:
        cases = corpus_all_cases()
        metafunc.parametrize("corpus_case", cases, ids=_ids(cases))
