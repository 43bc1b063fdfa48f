"""Suite-wide pytest options."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/emit_c/golden/* from the current emitter")
    parser.addoption("--flag-matrix", choices=("default", "full"), default="default",
                     help="the compiler-flag matrices of the op table and the corpus (tests/e2e/test_flag_matrix_*.py): "
                          "a few gcc and clang flag sets a case, rotating, by default; all 10 with 'full'")
