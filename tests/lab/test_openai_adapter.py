"""The adapter's install hint; its traffic is tested over a real socket in test_replay.py."""

import sys

import pytest

from keel_lab import LabError
from keel_lab.providers.openai_adapter import OpenAIChatAdapter


def test_without_the_openai_extra_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # `import openai` now raises ImportError
    with pytest.raises(LabError, match=r"needs the official openai SDK: "
                                       r"pip install 'keel-lab\[openai\]'"):
        OpenAIChatAdapter("gpt-4.1-mini", "http://127.0.0.1:9")


def test_a_given_client_needs_no_sdk(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    client = object()
    assert OpenAIChatAdapter("m", "http://127.0.0.1:9", client=client).client is client


def test_with_the_sdk_it_builds_a_client_for_the_server():
    model = OpenAIChatAdapter("m", "http://127.0.0.1:9/v1", timeout=3)
    assert str(model.client.base_url) == "http://127.0.0.1:9/v1/"
    assert model.client.max_retries == 0 and model.client.timeout == 3
