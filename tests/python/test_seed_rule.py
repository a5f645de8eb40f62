"""scripts/tools/export-model.py draws a zoo network's weights from cmlbed's one seed rule
(include/cmlbed/base/seed_streams.hpp): the same values as the C++ unit test
SeedStreams.TheRuleIsFixed pins, and the layer seeds the zoo uses."""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "tools", "export-model.py")


def load_export_model():
    spec = importlib.util.spec_from_file_location("export_model", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rule_is_the_cpp_rule():
    em = load_export_model()
    assert em.splitmix64(0) == 0xE220A8397B1DCDAF
    assert em.stream_seed(1, "dropout", (3,)) == 0xDEFDE8623004308A


def test_layer_seeds_are_the_weights_stream():
    em = load_export_model()
    assert em.layer_seed(7, 2) == em.stream_seed(7, "weights", (2,))
    assert len({em.layer_seed(1, i) for i in range(10)}) == 10
    assert em.stream_seed(1, "weights", (1, 2)) != em.stream_seed(1, "weights", (2, 1))
