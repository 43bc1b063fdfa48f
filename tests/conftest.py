"""Suite-wide pytest options."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/emit_c/golden/* from the current emitter")
