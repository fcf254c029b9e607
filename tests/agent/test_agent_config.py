"""config/llm.yaml, environment overrides, the key-hiding repr, and the choice of model."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentmem_nb.agent as agent
from agentmem_nb import ConfigError, MemoryStore
from agentmem_nb.agent import ChatService, LLMConfig, OfflineChatModel, load_config, make_chat_model

REPO = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "llm.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_example_selects_the_offline_model() -> None:
    config = load_config(REPO / "config" / "llm.yaml", environ={})
    assert config.offline and config.api_key == "" and config.model == "gpt-4o-mini"
    assert isinstance(make_chat_model(config), OfflineChatModel)


def test_the_original_format_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, 'llm:\n  api_key: "sk-abc"\n  model: deepseek-chat\n'
                            '  base_url: https://api.deepseek.com/v1/\n  timeout: 12.5\n  max_retries: 0\n')
    config = load_config(path, environ={})
    assert (config.api_key, config.model, config.base_url, config.timeout, config.max_retries) == (
        "sk-abc", "deepseek-chat", "https://api.deepseek.com/v1", 12.5, 0)
    assert not config.offline and config.source == str(path)


def test_repr_and_str_never_show_the_key(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "llm:\n  api_key: sk-very-secret-123\n"), environ={})
    for text in (repr(config), str(config), f"{config}", repr(ChatService(MemoryStore(tmp_path), config=config))):
        assert "sk-very-secret-123" not in text
    assert "api_key=<set>" in repr(config)
    assert "api_key=<empty>" in repr(LLMConfig())


def test_agentmem_variables_override_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "llm:\n  api_key: from-file\n  model: file-model\n  base_url: http://file/v1\n")
    env = {"AGENTMEM_API_KEY": "from-env", "AGENTMEM_MODEL": "env-model", "AGENTMEM_BASE_URL": "http://env/v1",
           "AGENTMEM_LLM_TIMEOUT": "7", "AGENTMEM_LLM_MAX_RETRIES": "1"}
    config = load_config(path, environ=env)
    assert (config.api_key, config.model, config.base_url, config.timeout, config.max_retries) == (
        "from-env", "env-model", "http://env/v1", 7.0, 1)
    assert "$AGENTMEM_API_KEY" in config.source


def test_openai_variables_only_fill_gaps_and_never_leak_to_other_servers(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no config/llm.yaml here
    assert load_config(environ={"OPENAI_API_KEY": "sk-openai"}).api_key == "sk-openai"
    path = _write(tmp_path, "llm:\n  api_key: ''\n  base_url: https://api.deepseek.com/v1\n")
    assert load_config(path, environ={"OPENAI_API_KEY": "sk-openai"}).offline, "an OpenAI key is not sent elsewhere"
    keyed = _write(tmp_path, "llm:\n  api_key: file-key\n")
    assert load_config(keyed, environ={"OPENAI_API_KEY": "sk-openai"}).api_key == "file-key"
    via_openai_host = _write(tmp_path, "llm:\n  base_url: https://api.openai.com/v1\n")
    assert load_config(via_openai_host, environ={"OPENAI_API_KEY": "sk-openai"}).api_key == "sk-openai"


def test_agentmem_config_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "llm:\n  model: picked\n")
    assert load_config(environ={"AGENTMEM_CONFIG": str(path)}).model == "picked"
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(environ={"AGENTMEM_CONFIG": str(tmp_path / "missing.yaml")})


def test_a_missing_default_file_means_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(environ={})
    assert config.offline and config.source == "defaults"


@pytest.mark.parametrize(("text", "expected"), [
    ("llm: [unclosed\n", "not valid YAML at line"),
    ("llm:\n  api_key: 'a\n  model: b\n", "not valid YAML"),
    ("- just\n- a list\n", "must hold a mapping"),
    ("llm: just text\n", "'llm' in .* must be a mapping"),
    ("llm:\n  apikey: typo\n", r"unknown key\(s\) \['apikey'\]"),
    ("llm:\n  api_key: 12345\n", "llm.api_key .* must be text, got a YAML int .not shown"),
    ("llm:\n  model: [a, b]\n", "llm.model .* must be text"),
    ("llm:\n  timeout: soon\n", "llm.timeout .* positive number"),
    ("llm:\n  timeout: -1\n", "llm.timeout .* positive number"),
    ("llm:\n  max_retries: -2\n", "llm.max_retries .* whole number"),
    ("llm:\n  max_retries: true\n", "llm.max_retries .* whole number"),
])
def test_malformed_files_raise_config_error(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_config(_write(tmp_path, text), environ={})


def test_malformed_environment_values_raise_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"timeout from \$AGENTMEM_LLM_TIMEOUT"):
        load_config(environ={"AGENTMEM_LLM_TIMEOUT": "fast"})


def test_empty_file_and_empty_section_mean_defaults(tmp_path: Path) -> None:
    assert load_config(_write(tmp_path, ""), environ={}).offline
    assert load_config(_write(tmp_path, "llm:\n"), environ={}).model == "gpt-4o-mini"


def test_a_key_selects_chatopenai_for_chat_completions() -> None:
    model = make_chat_model(LLMConfig(api_key="k", model="m", base_url="http://127.0.0.1:9/v1", timeout=3,
                                      max_retries=0))
    from langchain_openai import ChatOpenAI

    assert isinstance(model, ChatOpenAI)  # a checking subclass (see agentmem_nb.agent.models)
    assert model.use_responses_api is False
    assert (model.model_name, model.openai_api_base, model.request_timeout, model.max_retries) == (
        "m", "http://127.0.0.1:9/v1", 3, 0)
    assert type(model.openai_api_key).__name__ == "SecretStr"


def test_service_reads_the_config_when_none_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert ChatService(MemoryStore(tmp_path / "m")).offline
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "llm.yaml").write_text("llm:\n  api_key: k\n  model: picked-model\n", encoding="utf-8")
    svc = ChatService(MemoryStore(tmp_path / "m"))
    assert not svc.offline and svc.model_name == "picked-model"


def test_public_names() -> None:
    assert set(agent.__all__) == {
        "ChatService", "SessionBusy", "TurnResult", "TurnEvent", "LLMConfig", "load_config", "make_chat_model",
        "OfflineChatModel", "MemoryTools", "SYSTEM_PROMPT"}
    for name in agent.__all__:
        assert getattr(agent, name).__doc__ or name == "SYSTEM_PROMPT"
