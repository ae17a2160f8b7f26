"""A claim's region: the rules every verdict is decided by."""

import math

from fits.claims.claim import Region


def test_region_rules_supported_inside_contradicted_outside_inconclusive_across():
    region = Region.around(42, 2, factor=True)
    assert (region.low, region.high) == (21, 84)
    assert region.holds(30, 60) and not region.misses(30, 60)
    assert region.misses(5, 20) and region.misses(90, math.inf)
    assert not region.holds(15, 30) and not region.misses(15, 30)
    assert Region.around(0.109, 0.01, factor=False).holds(0.1, 0.118)
    assert str(Region(10.0)) == ">= 10" and str(Region(high=0.5)) == "<= 0.5"
    assert str(Region.around(0.109, 0.01, factor=False)) == "[0.099, 0.119]"
