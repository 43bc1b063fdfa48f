"""The name supply: one per compiled module, it hands out every C identifier
derived from an HLO name (kernels, constants, scalar functions, sub-programs,
and, in a local scope per program, slots), so no two things share a C name.
"""
from __future__ import annotations

from ..kernel.builder import c_ident


class NameSupply:
    """C identifiers for one generated .c file.

    A name is the readable spelling of its HLO name (`k_add_5`, `c_weights`,
    `r_max_1`). When two HLO names spell the same identifier (`w.1` and `w_1`),
    the one asked for first keeps it and the later one gets `_2` (or `_3`, ...:
    the first suffixed form not in use). Lowering asks in a fixed order (module
    order, then schedule order), so one module always gives the same names, and a
    name that collides with nothing is never renamed. Asking again for the same
    key returns the same name.
    """

    def __init__(self, reserved: tuple[str, ...] = (), parent: NameSupply | None = None, prefix: str = ""):
        self._parent = parent
        self.prefix = prefix  # the public C prefix (custom-call functions are named under it)
        self._taken: set[str] = set(reserved)
        self._given: dict[tuple[str, ...], str] = {}

    def _in_use(self, name: str) -> bool:
        return name in self._taken or (self._parent is not None and self._parent._in_use(name))

    def fresh(self, base: str, derived: tuple[str, ...] = ()) -> str:
        """A new identifier `base` or `base_2`, `base_3`, ...; `derived` suffixes name
        companion symbols the caller will define too (`_range` for `k_add_range`),
        which are reserved with it and must be free as well."""
        assert base.isidentifier(), base
        name, n = base, 2
        while any(self._in_use(name + d) for d in ("",) + derived):
            name, n = f"{base}_{n}", n + 1
        self._taken.update(name + d for d in ("",) + derived)
        return name

    def name(self, key: tuple[str, ...], prefix: str, hlo: str, derived: tuple[str, ...] = ()) -> str:
        """The identifier for `key` (say ("kernel", program, instruction)): given once,
        spelled `prefix` + the HLO name made an identifier."""
        got = self._given.get(key)
        if got is None:
            got = self._given[key] = self.fresh(prefix + c_ident(hlo), derived)
        return got

    # ---- the kinds of file-scope names

    def kernel(self, program: str, hlo: str) -> str:
        """A kernel function of `program` (also defines `<name>_args` and `<name>_range`)."""
        return self.name(("kernel", program, hlo), "k_", hlo, ("_args", "_range"))

    def constant(self, program: str, hlo: str) -> str:
        return self.name(("constant", program, hlo), "c_", hlo)

    def scalar_function(self, computation: str) -> str:
        """A reducer/comparator function: one per HLO computation, shared by every program."""
        return self.name(("function", computation), "r_", computation)

    def program(self, parent: str, computation: str) -> str:
        """The C prefix of the sub-program running `computation` (defines `<name>_execute`)."""
        return self.name(("program", parent, computation), f"{parent}_", computation, ("_execute",))

    def host_call(self, program: str, hlo: str) -> str:
        """The wrapper that calls the application for instruction `hlo` of `program`."""
        return self.name(("host", program, hlo), "h_", hlo)

    def custom_call(self, target: str) -> str:
        """The application's function implementing custom-call `target`: `PREFIX_cc_<target>`."""
        return self.name(("custom_call", target), f"{self.prefix}_cc_", target)

    def local(self) -> NameSupply:
        """A scope for one program's locals (slot pointers, kernel parameters): unique
        among themselves and never spelled like a file-scope name given so far."""
        return NameSupply(parent=self)

    def slot(self, key: str, base: str | None = None) -> str:
        """The pointer naming slot `key` (`add.5`, `tuple.3#1`) in a local scope."""
        spelled = base if base is not None else "s_" + c_ident(key.replace("#", "_o"))
        got = self._given.get(("slot", key))
        if got is None:
            got = self._given[("slot", key)] = self.fresh(spelled)
        return got
