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
