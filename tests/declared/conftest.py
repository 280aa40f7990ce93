import pytest

from workbench import registry


@pytest.fixture(autouse=True)
def formats_as_they_were():
    """A format a test declares is registered in its process: gone after the test."""
    formats, declared = dict(registry.FORMATS), dict(registry.DECLARED)
    yield
    registry.FORMATS.clear()
    registry.FORMATS.update(formats)
    registry.DECLARED.clear()
    registry.DECLARED.update(declared)
