import pytest

from hopsim.scenario.units import UnitError, fmt_rate, fmt_size, fmt_time, parse_fraction, parse_rate, parse_size, parse_time


@pytest.mark.parametrize("text,value", [
    ("100Gbps", 100 * 10**9), ("2.5Gbps", 2_500_000_000), ("40G", 40 * 10**9), ("50Mb/s", 50 * 10**6),
    ("9600bps", 9600),
])
def test_rates(text, value):
    assert parse_rate(text) == value
    assert parse_rate(fmt_rate(value)) == value


@pytest.mark.parametrize("text,value", [
    ("1us", 10**6), ("0.001ms", 10**6), ("1000ns", 10**6), ("2s", 2 * 10**12), ("7ps", 7), ("1.5ns", 1500),
])
def test_times(text, value):
    assert parse_time(text) == value
    assert parse_time(fmt_time(value)) == value


@pytest.mark.parametrize("text,value", [
    ("12MB", 12_000_000), ("4KiB", 4096), ("32MiB", 32 * 2**20), ("1.5KB", 1500), (1500, 1500), ("60B", 60),
])
def test_sizes(text, value):
    assert parse_size(text) == value
    assert parse_size(fmt_size(value)) == value


def test_fractions():
    assert parse_fraction("60%") == pytest.approx(0.6)
    assert parse_fraction(0.25) == 0.25


@pytest.mark.parametrize("fn,value,needle", [
    (parse_rate, "100GB", "unknown rate unit 'GB'"),
    (parse_rate, 100, "bare number is ambiguous"),
    (parse_time, 5, "bare number is ambiguous"),
    (parse_time, "1.5ps", "finer than 1 ps"),
    (parse_time, "3 fortnights", "expected a number with a unit"),
    (parse_size, "1Mb", "lowercase 'b' means bits"),
    (parse_size, "0.5B", "finer than 1 byte"),
    (parse_fraction, "lots", "percentage"),
])
def test_errors_name_allowed_forms(fn, value, needle):
    with pytest.raises(UnitError) as e:
        fn(value)
    assert needle in str(e.value)


@pytest.mark.parametrize("parse,value,why", [
    (parse_rate, "1e9999999Gbps", "too large"), (parse_time, "1e9999999us", "too large"),
    (parse_size, "1e9999999GB", "too large"), (parse_fraction, "1e9999999%", "too large"),
    (parse_rate, "1e41bps", "too large"), (parse_size, "1e-9999999MB", "finer than 1 byte"),
    (parse_time, "1e-9999999us", "finer than 1 ps"), (parse_rate, "1e-9999999Gbps", "finer than 1 bit/s"),
    (parse_time, "1e-41s", "finer than 1 ps"), (parse_fraction, "1e-9999999%", "too small to tell from 0"),
    (parse_time, "1.0000000000000000000000000000000001us", "finer than 1 ps"),
])
def test_extreme_exponents_are_named_not_overflowed_or_zeroed(parse, value, why):
    """An exponent of millions is a UnitError, never decimal.Overflow nor a silent 0, and a value
    with more digits than the default decimal context keeps is not rounded into range."""
    with pytest.raises(UnitError, match=why):
        parse(value)


def test_long_exact_values_still_parse():
    assert parse_time("0.000000000001s") == 1
    assert parse_time("1" + "0" * 30 + "e-30us") == 10**6
    assert parse_fraction("1e-40") == 1e-40
