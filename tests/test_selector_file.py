"""The answer selector's weights as data: the package's, or a file ``$PPKIT_SELECTOR`` names."""
import json

import pytest

from ppkit.answer.select import SELECTOR_PATH, load_selector
from ppkit.core.errors import InvalidInput


def test_the_package_selector_by_default_and_a_named_one_when_set(monkeypatch, tmp_path):
    monkeypatch.delenv("PPKIT_SELECTOR", raising=False)
    package = load_selector()
    assert package == load_selector(SELECTOR_PATH)
    own = json.loads(SELECTOR_PATH.read_text())
    own["threshold"] = 0.9
    (tmp_path / "mine.json").write_text(json.dumps(own))
    monkeypatch.setenv("PPKIT_SELECTOR", str(tmp_path / "mine.json"))
    assert load_selector().threshold == 0.9 and load_selector().weights == package.weights


def test_a_missing_or_malformed_selector_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PPKIT_SELECTOR", str(tmp_path / "absent.json"))
    with pytest.raises(InvalidInput, match="no answer selector at .*absent.json.*fit-answers"):
        load_selector()
    (tmp_path / "bad.json").write_text('{"weights": 3}')
    with pytest.raises(InvalidInput, match="is not an answer selector"):
        load_selector(tmp_path / "bad.json")
