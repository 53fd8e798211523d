"""The layer chains the Vulkan loader reports, for tests that must know which layers a program
really ran with, in which order, and from which files.

    env["VK_LOADER_DEBUG"] = "layer"      # then, from the program's stderr:
    chains = loader_chain.parse(stderr)   # {"instance": [Layer...], "device": [Layer...]}

Each chain lists the layers from the application down to the drivers, as the loader (1.3.239,
Debian 12) prints them under "vkCreateInstance layer callstack setup to:" and "vkCreateDevice
layer callstack setup to:"; a program that creates several instances or devices reports the
last one of each. A Layer has name, type ("Explicit" or "Implicit"), manifest and library (the
paths the loader used, library made absolute with os.path.realpath).
"""
import os
import re

_START = re.compile(r"vkCreate(Instance|Device) layer callstack setup to:")
_LAYER = re.compile(r"^(?:[A-Z| ]+:)?\s+(VK_LAYER_\w+)\s*$")
_FIELD = re.compile(r"^(?:[A-Z| ]+:)?\s+(Type|Manifest|Library):\s+(.*?)\s*$")
_END = re.compile(r"<Drivers>|<Device>")


class Layer:
    def __init__(self, name):
        self.name = name
        self.type = None
        self.manifest = None
        self.library = None

    def __repr__(self):
        return f"{self.name} ({self.type}, {self.library})"


def parse(text):
    chains = {}
    current = None
    for line in text.splitlines():
        m = _START.search(line)
        if m:
            current = chains[m.group(1).lower()] = []
            continue
        if current is None:
            continue
        if _END.search(line):
            current = None
            continue
        m = _LAYER.match(line)
        if m:
            current.append(Layer(m.group(1)))
            continue
        m = _FIELD.match(line)
        if m and current:
            key, value = m.group(1).lower(), m.group(2)
            if key == "library" and os.path.isabs(value):
                value = os.path.realpath(value)
            setattr(current[-1], key, value)
    return chains


def names(chain):
    return [layer.name for layer in chain]
