"""Suite-wide pytest options."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/emit_c/golden/* from the current emitter")
    parser.addoption("--flag-matrix", choices=("default", "full"), default="default",
                     help="the op table's compiler-flag matrix (tests/e2e/test_flag_matrix_op_table.py): "
                          "one gcc and one clang flag set a case, rotating, by default; all 10 with 'full'")
