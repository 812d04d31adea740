"""The asset store: the shipped files, the manifest, serving, and refusing tampered files."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from merknera.app import Platform
from merknera.assets import AssetError, AssetStore, default_directory, load_games, read_manifest
from merknera.config import Config, ListenerSettings
from tests.support import Arena

ASSETS = default_directory()


def test_the_shipped_assets_match_their_manifest() -> None:
    store = AssetStore.load(ASSETS)
    roles = store.roles("SCRABBLE")
    assert set(roles) == {"gameboard", "dictionary", "letters"}
    for name, entry in roles.items():
        content = store.contents("SCRABBLE")[name]
        assert hashlib.sha1(content).hexdigest() == entry.sha1  # noqa: S324
        assert hashlib.sha256(content).hexdigest() == entry.sha256


def test_the_dictionary_is_a_real_word_list_with_its_source() -> None:
    words = (ASSETS / "scrabble/dictionary-english.txt").read_text("ascii").splitlines()
    assert len(words) >= 100_000
    assert all(re.fullmatch(r"[A-Z]{2,15}", word) for word in words)
    assert words == sorted(set(words))
    assert {"QUIZ", "ZEBRA", "HOUSE", "JUXTAPOSE"} <= set(words)
    source = (ASSETS / "scrabble/dictionary-english.SOURCE.md").read_text("utf-8")
    assert "wamerican-large" in source and f"{len(words):,}" in source
    assert "Kevin Atkinson" in (ASSETS / "scrabble/dictionary-english.LICENSE.txt").read_text()


def test_the_tiles_and_the_board_are_standard() -> None:
    letters = json.loads((ASSETS / "scrabble/letters-english.json").read_text())
    counts = {tile["letter"]: tile["count"] for tile in letters["tiles"]}
    points = {tile["letter"]: tile["points"] for tile in letters["tiles"]}
    assert sum(counts.values()) == 100 and counts["*"] == 2 and points["*"] == 0
    assert (counts["E"], points["Q"], points["Z"], letters["bingo"], letters["rack"]) == (
        12, 10, 10, 50, 7)
    board = json.loads((ASSETS / "scrabble/board-standard.json").read_text())
    squares = [cell for row in board["squares"] for cell in row]
    assert len(board["squares"]) == 15 and all(len(row) == 15 for row in board["squares"])
    assert {kind: squares.count(kind) for kind in ("TW", "DW", "TL", "DL")} == {
        "TW": 8, "DW": 17, "TL": 12, "DL": 24}
    assert board["start"] == {"row": 7, "col": 7} and board["squares"][7][7] == "DW"


async def test_assets_are_served_with_their_hash_as_etag(arena: Arena) -> None:
    store = arena.platform.assets
    for entry in store.roles("SCRABBLE").values():
        response = await arena.client.get(f"/assets/{entry.sha1}/{entry.name}")
        assert response.status == 200
        body = await response.read()
        assert hashlib.sha1(body).hexdigest() == entry.sha1  # noqa: S324
        assert response.headers["ETag"] == f'"{entry.sha1}"'
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert response.headers["Content-Type"].startswith(entry.content_type.split(";")[0])
        again = await arena.client.get(f"/assets/{entry.sha1}/{entry.name}",
                                       headers={"If-None-Match": f'"{entry.sha1}"'})
        assert again.status == 304 and await again.read() == b""
        head = await arena.client.head(f"/assets/{entry.sha1}/{entry.name}")
        assert head.status == 200
    dictionary = store.roles("SCRABBLE")["dictionary"]
    assert (await arena.client.get(f"/assets/{dictionary.sha1}/other.txt")).status == 404
    assert (await arena.client.get(f"/assets/{'0' * 40}/{dictionary.name}")).status == 404


@pytest.mark.parametrize(("accept", "gzipped"), [
    ("gzip, deflate", True), ("br;q=1.0, gzip;q=0.5", True), ("*", True),
    ("gzip;q=0", False), ("identity", False), ("", False)])
async def test_a_large_asset_is_sent_gzipped_as_compressed_once(
        arena: Arena, accept: str, gzipped: bool) -> None:
    store = arena.platform.assets
    dictionary = store.roles("SCRABBLE")["dictionary"]
    url = f"/assets/{dictionary.sha1}/{dictionary.name}"
    answers = [await arena.client.get(url, headers={"Accept-Encoding": accept},
                                      auto_decompress=False) for _ in range(3)]
    bodies = {await answer.read() for answer in answers}
    assert len(bodies) == 1  # the same bytes each time: compressed once, then kept
    body = bodies.pop()
    assert all(a.headers["Vary"] == "Accept-Encoding" for a in answers)
    if gzipped:
        assert all(a.headers["Content-Encoding"] == "gzip" for a in answers)
        assert len(body) < dictionary.size / 2
        body = gzip.decompress(body)
    else:
        assert all("Content-Encoding" not in a.headers for a in answers)
    assert hashlib.sha1(body).hexdigest() == dictionary.sha1  # noqa: S324


def test_descriptors_are_absolute_urls_from_the_public_base_url() -> None:
    store = AssetStore.load(ASSETS)
    config = Config(listeners=ListenerSettings(public_url="https://arena.example.org/"))
    descriptors = store.descriptors("SCRABBLE", config.listeners.base_url)
    entry = store.roles("SCRABBLE")["letters"]
    assert descriptors["letters"] == {
        "sha1": entry.sha1,
        "url": f"https://arena.example.org/assets/{entry.sha1}/letters-english.json"}
    assert store.descriptors("TICTACTOE", config.listeners.base_url) == {}


@pytest.fixture
def tampered(tmp_path: Path) -> Path:
    copy = tmp_path / "assets"
    shutil.copytree(ASSETS, copy)
    path = copy / "scrabble/dictionary-english.txt"
    path.write_bytes(path.read_bytes().replace(b"\nZEBRA\n", b"\nZEBRO\n"))
    return copy


async def test_a_tampered_file_stops_start_up(config: Config, tampered: Path) -> None:
    platform = Platform(config.replace(assets_dir=str(tampered)))
    with pytest.raises(AssetError, match=r"scrabble/dictionary-english\.txt: SHA1 "):
        await platform.start()


def test_merknera_assets_verify_names_the_tampered_file(tampered: Path) -> None:
    good = subprocess.run([sys.executable, "-m", "merknera", "assets", "verify"],
                          capture_output=True, text=True, check=False)
    assert good.returncode == 0, good.stderr
    assert "3 of 3 files match" in good.stdout
    bad = subprocess.run([sys.executable, "-m", "merknera", "assets", "verify",
                          "--assets-dir", str(tampered)], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 1
    assert "MISMATCH scrabble/dictionary-english.txt: SHA1" in bad.stdout
    assert "ok       scrabble/letters-english.json" in bad.stdout
    serve = subprocess.run([sys.executable, "-m", "merknera", "serve", "--port", "0",
                            "--assets-dir", str(tampered), "--db",
                            str(tampered / "x.db")], capture_output=True, text=True,
                           check=False, timeout=60)
    assert serve.returncode == 1
    assert "scrabble/dictionary-english.txt" in serve.stderr


def test_a_manifest_naming_a_missing_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({
        "files": {}, "games": {"SCRABBLE": {"dictionary": "nowhere.txt"}}}))
    with pytest.raises(AssetError, match=r"nowhere\.txt, which is not listed"):
        read_manifest(tmp_path)


def test_a_file_with_the_right_hash_but_unusable_contents(tmp_path: Path) -> None:
    """Hashes alone do not make a dictionary: verify and start-up also parse the files."""
    copy = tmp_path / "assets"
    shutil.copytree(ASSETS, copy)
    path = copy / "scrabble/dictionary-english.txt"
    path.write_bytes(path.read_bytes() + b"BAD-WORD\n")
    subprocess.run([sys.executable, "-m", "merknera", "assets", "manifest", "--assets-dir",
                    str(copy)], check=True, capture_output=True)
    verify = subprocess.run([sys.executable, "-m", "merknera", "assets", "verify",
                             "--assets-dir", str(copy)], capture_output=True, text=True,
                            check=False)
    assert verify.returncode == 1
    assert "SCRABBLE cannot use its asset files" in verify.stdout
    with pytest.raises(AssetError, match="SCRABBLE cannot use its asset files"):
        load_games(AssetStore.load(copy))


async def test_conditional_requests_compare_whole_tags(arena: Arena) -> None:
    entry = arena.platform.assets.roles("SCRABBLE")["letters"]
    url = f"/assets/{entry.sha1}/{entry.name}"
    for header, status in ((f'"x{entry.sha1}y"', 200), ("*", 304),
                           (f'"other", W/"{entry.sha1}"', 304)):
        response = await arena.client.get(url, headers={"If-None-Match": header})
        assert response.status == status, header
