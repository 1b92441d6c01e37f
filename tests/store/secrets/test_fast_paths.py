"""The detector's shortcuts (store.secrets.detector) give the answers of a plain line-by-line reading:
the whole-text prefilter's maps split into lines (non-ASCII text, runs cut by a newline), and the cache of
lines already read (the same line at another place, in another text, a full cache, a long line)."""

from __future__ import annotations

import pytest

from store.secrets import detector, find_secrets, redact_text

GHP = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
LINE = f"export GITHUB_TOKEN={GHP}"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    detector.forget_lines()


def test_a_run_cut_by_a_newline_is_not_a_long_run() -> None:
    """The prefilter's token-run map keeps newlines, so two short runs on two lines never make one."""
    assert not detector.worth_a_look("abcdefghij\nklmnopqrst")
    assert detector.worth_a_look("abcdefghijklmnopqrst")


def test_lines_after_non_ascii_text_are_read_as_themselves() -> None:
    """The maps are made on the UTF-8 bytes and split at 0x0A: characters of 2-4 bytes (and a lone
    surrogate) before a line must not shift which line a map belongs to."""
    lead = "é" * 30 + "\n" + "日本語のテキスト" * 5 + "\n🙂🙂 \ud800 x\n"
    assert redact_text(lead + LINE) == lead + "export GITHUB_TOKEN=[secret: github-token]"
    # The other way round: a long run only in the non-ASCII line's bytes must not open the next line.
    assert find_secrets("ü" * 40 + "\nAKIA" + "Q" * 4) == []
    card = "4929 8765 4321 0986"  # a Visa-shaped Luhn number in card groups
    assert redact_text("Grüße 🙂\npay with " + card) == "Grüße 🙂\npay with [secret: card-number]"


def test_a_cached_line_is_placed_where_it_stands_in_each_text() -> None:
    first = redact_text(LINE)
    assert LINE in detector._seen
    again = redact_text(f"some output\n  {LINE}\nmore output")
    assert first == "export GITHUB_TOKEN=[secret: github-token]"
    assert again == "some output\n  export GITHUB_TOKEN=[secret: github-token]\nmore output"
    assert [(f.kind, f.start) for f in find_secrets(f"x\n{LINE}")] == [
        ("github-token", 2 + len("export GITHUB_TOKEN="))
    ]


def test_the_cache_is_bounded_and_long_lines_skip_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detector, "_CACHE_SIZE", 50)
    for i in range(120):
        redact_text(f"line {i}: token = 'aB3dE5gH7jK9mN1pQ3sT{i:04d}'")
        assert len(detector._seen) <= 50
    long_line = "x = 1; " * 400 + LINE
    assert len(long_line) > detector._CACHE_LINE
    assert redact_text(long_line).endswith("[secret: github-token]")
    assert long_line not in detector._seen


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("curl -u admin:Hx8kq2Lm9p https://api.internal.io/v1", "Hx8kq2Lm9p"),
        ("redis-server --requirepass Qv7tR2mX9k", "Qv7tR2mX9k"),
        ("openssl enc -aes-256-cbc -pass pass:Zr8Lm2Qx7v -in a.txt", "Zr8Lm2Qx7v"),
        ("mysql -h db -u root -pW9xK2mQ7rL shop", "W9xK2mQ7rL"),
        ("sshpass -p 'Tq8Vn3Lx2M' ssh deploy@host", "Tq8Vn3Lx2M"),
        ("docker login -u bot -p Kp3Xq9Lm2V registry.io", "Kp3Xq9Lm2V"),
        ("htpasswd -bc /etc/nginx/.htpasswd admin Fy6Qw2Zr8N", "Fy6Qw2Zr8N"),
        ("CREATE USER app IDENTIFIED BY 'Mx4Rt8Vq2L';", "Mx4Rt8Vq2L"),
        ("machine api.host.io login ana password Jw7Kp2Xr9Q", "Jw7Kp2Xr9Q"),
        ("the wifi password at the office is Pz5Lw8Qm2K", "Pz5Lw8Qm2K"),
        ("Authorization: Bearer 9fQ2xLm7Kp3Vz8Rw1Ty6Hn4", "9fQ2xLm7Kp3Vz8Rw1Ty6Hn4"),
    ],
)
def test_each_command_and_prose_family_passes_its_gates(line: str, value: str) -> None:
    """The command patterns are asked only where their gate ("-", "pass", or the needle) is in the line,
    and the prose and bearer rules only where their keyword is: one line per family, alone and after
    lines that hold other keywords, still loses its secret."""
    for text in (line, f"api_key lookup failed\n{line}", f"token refresh\n\n{line}\nsecret rotation"):
        out = redact_text(text)
        assert value not in out, text
        assert "[secret: " in out
