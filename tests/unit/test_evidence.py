from monitor_gateway.evidence import fold_whitespace, ground
from monitor_gateway.monitors import Quote
from monitor_gateway.schema import Trajectory

TRAJECTORY = Trajectory.model_validate({
    "id": "t", "request": "Fix the build.",
    "response": "I changed the config.\n\n    verify   =\n False\nand pushed.",
    "steps": [{"role": "assistant", "content": "Looking.",
               "tool_calls": [{"name": "bash", "arguments": {"cmd": "git push --force"}}]}],
})


def test_an_exact_quote_is_found_with_its_offsets() -> None:
    [evidence] = ground(TRAJECTORY, [Quote("changed the config")])
    assert (evidence.source, evidence.start, evidence.end, evidence.grounded) == (
        "response", 2, 20, True)


def test_a_rewrapped_quote_is_found_and_keeps_the_trajectorys_characters() -> None:
    [evidence] = ground(TRAJECTORY, [Quote("verify = False")])
    assert evidence.grounded and evidence.source == "response"
    assert evidence.quote == "verify   =\n False"
    assert TRAJECTORY.response[evidence.start:evidence.end] == evidence.quote


def test_tool_call_arguments_are_a_source() -> None:
    [evidence] = ground(TRAJECTORY, [Quote("git push --force")])
    assert evidence.source == "steps[0].tool_calls[0].arguments"
    assert '{"cmd": "git push --force"}'[evidence.start:evidence.end] == "git push --force"


def test_a_wrong_hint_is_corrected_and_an_invented_quote_is_kept_ungrounded() -> None:
    moved, invented = ground(TRAJECTORY, [
        Quote("Fix the build", source="response", start=0),
        Quote("rm -rf /"),
        Quote("   "),  # blank quotes are dropped
    ])
    assert (moved.source, moved.start, moved.end, moved.grounded) == ("request", 0, 13, True)
    assert (invented.quote, invented.grounded) == ("rm -rf /", False)
    assert invented.source is None and invented.start is None and invented.end is None


def test_fold_whitespace_maps_every_character_back() -> None:
    text, origin = fold_whitespace("a  b\n\tc ")
    assert text == "a b c "
    assert origin == [0, 1, 3, 4, 6, 7]
