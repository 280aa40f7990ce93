import pytest

from workbench.damage import quality


@pytest.fixture(autouse=True)
def judged_afresh():
    """Each test judges the decisions it reads itself (not from the cache another test
    filled), so that each checks the code that judged them."""
    quality._CACHE.clear()
