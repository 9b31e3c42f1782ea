"""The adapter's install hint; its traffic is tested over a real socket in test_replay.py."""

import sys

import pytest

from keel_lab.providers._openai_adapter import OpenAIChatAdapter

pytestmark = pytest.mark.ch7


def test_a_given_client_needs_no_sdk(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    client = object()
    assert OpenAIChatAdapter("m", "http://127.0.0.1:9", client=client).client is client


def test_with_the_sdk_it_builds_a_client_for_the_server():
    model = OpenAIChatAdapter("m", "http://127.0.0.1:9/v1", timeout=3)
    assert str(model.client.base_url) == "http://127.0.0.1:9/v1/"
    assert model.client.max_retries == 0 and model.client.timeout == 3
