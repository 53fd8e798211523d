#!/usr/bin/env python3
"""Generates, from vk.xml, the list of Vulkan commands that can name a VkBuffer or a
VkDeviceMemory, and the code that makes each of them resolve deferred binds first.

Cached readback defers the binds of buffers into memory whose use is not known yet
(src/memory/readback_deferral.h). Before any command that can name such a buffer (or its memory)
reaches the driver, the deferral must decide where the buffer lives and bind it; otherwise the
driver would see an unbound buffer. This script finds every such command in the registry:
a parameter of type VkBuffer or VkDeviceMemory, an array of them, or a structure that holds one
(directly, in a member structure, or in any structure vk.xml lets extend it through pNext,
recursively).

Outputs (into --out-dir):
  buffer_uses.h           declarations, in slipstream::buffer_use, of one resolver per such
                          device-level command, `void <Fn>(DeviceState&, <its parameters>)`;
                          kKnownCommands (every command name of the registry, aliases too,
                          sorted) for is_known_command().
  buffer_uses_generic.cpp the resolvers of every command not listed in --precise: they resolve
                          "keep" exactly the buffers and memory the command names as parameters,
                          and every pending bind of the device when it may name more inside a
                          structure (the conservative answer).
  buffer_use_intercepts.inl  pass-through wrappers for the commands that are neither vkCmd*
                          (gen_commands.py puts the call into those) nor in --manual
                          (hand-written hooks in layer/ call the resolver or do better), with a
                          name -> function table for vkGetDeviceProcAddr.
Lists:
  --precise  commands whose resolvers src/ writes by hand (readback_buffer_uses.cpp): the uses
             that tell readback staging from everything else.
  --manual   commands layer/ intercepts by hand for other reasons, each with why it needs no
             generated wrapper. Every name in both lists must be a command this script finds;
             a stale entry stops the build.
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_commands import load  # noqa: E402

TRACKED = {"VkBuffer", "VkDeviceMemory"}
# Commands whose buffers hide in opaque data that only a descriptor update template describes:
# vk.xml cannot show them, so they are named here (and must be resolved by hand: --precise).
OPAQUE = {"vkUpdateDescriptorSetWithTemplate", "vkUpdateDescriptorSetWithTemplateKHR",
          "vkCmdPushDescriptorSetWithTemplateKHR"}
DEVICE_LEVEL = {"VkDevice", "VkQueue", "VkCommandBuffer"}


def for_vulkan(elem):
    api = elem.get("api")
    return api is None or "vulkan" in api.split(",")


def load_structs(registry):
    """struct/union name -> [(member type, member name, is pointer/array)], and extenders."""
    root = ET.parse(registry).getroot()
    members, extenders = {}, {}
    for t in root.findall("types/type"):
        if t.get("category") not in ("struct", "union") or not for_vulkan(t):
            continue
        name = t.get("name")
        if t.get("alias"):
            continue
        ms = []
        for m in t.findall("member"):
            if not for_vulkan(m):
                continue
            mt = m.find("type").text
            ms.append(mt)
        members[name] = ms
        for base in (t.get("structextends") or "").split(","):
            if base:
                extenders.setdefault(base, []).append(name)
    return members, extenders


def struct_references(members, extenders):
    """struct name -> True when it, a member structure, or a pNext extension names a tracked
    handle."""
    memo = {}

    def visit(name, stack):
        if name in memo:
            return memo[name]
        if name in stack:
            return False  # a cycle through pNext: the other path decides
        stack = stack | {name}
        found = False
        for mt in members.get(name, []):
            if mt in TRACKED or (mt in members and visit(mt, stack)):
                found = True
                break
        if not found:
            for ext in extenders.get(name, []):
                if visit(ext, stack):
                    found = True
                    break
        memo[name] = found
        return found

    for s in members:
        visit(s, frozenset())
    return memo


def param_type(text):
    return text.replace("const ", "").replace("struct ", "").replace("*", " ").split()[0]


def parse_param(text, arg):
    """(type, is_pointer, name) of one parameter's C text."""
    t = param_type(text)
    return t, "*" in text or "[" in text, arg


def commands_naming_buffers(registry):
    """name -> (definition, protect, how) for every device-level command of the registry that
    can name a tracked handle. how: 'direct' when only parameters name them, 'nested' when a
    structure parameter may hold them."""
    commands, aliases, present, _ = load(registry)
    members, extenders = load_structs(registry)
    refs = struct_references(members, extenders)
    root = ET.parse(registry).getroot()
    lens = {}
    for c in root.findall("commands/command"):
        if c.get("alias") or not for_vulkan(c):
            continue
        name = c.find("proto/name").text
        lens[name] = {p.find("name").text: p.get("len") for p in c.findall("param") if for_vulkan(p)}
    out = {}
    for name in sorted(present):
        base = name
        while base in aliases:
            base = aliases[base]
        if base not in commands:
            continue
        cmd = commands[base]
        if param_type(cmd["params"][0]) not in DEVICE_LEVEL:
            continue
        how = None
        for text, arg in zip(cmd["params"], cmd["args"]):
            t = param_type(text)
            if t in TRACKED:
                how = how or "direct"
            elif t in members and refs.get(t):
                how = "nested"
        if name in OPAQUE:
            how = "opaque"
        if how:
            out[name] = (cmd, present[name], how, lens.get(base, {}))
    return out, aliases, commands, present


def read_list(path):
    names = {}
    if not path:
        return names
    with open(path) as f:
        for line in f:
            text, _, why = line.partition("#")
            text = text.strip()
            if text:
                names[text] = why.strip()
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--registry", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--precise", required=True)
    ap.add_argument("--manual", required=True)
    opts = ap.parse_args()
    found, aliases, commands, present = commands_naming_buffers(opts.registry)
    precise = read_list(opts.precise)
    manual = read_list(opts.manual)
    stale = sorted(n for n in list(precise) + list(manual) if n not in found)
    if stale:
        sys.exit(f"gen_buffer_uses.py: listed commands that name no VkBuffer/VkDeviceMemory in vk.xml: {stale}")
    opaque_generic = sorted(n for n, v in found.items() if v[2] == "opaque" and n not in precise)
    if opaque_generic:
        sys.exit(f"gen_buffer_uses.py: commands with template data must be in --precise: {opaque_generic}")
    undocumented = sorted(n for n, why in manual.items() if not why)
    if undocumented:
        sys.exit(f"gen_buffer_uses.py: --manual entries need a '# why' comment: {undocumented}")

    banner = "// Generated by tools/gen/gen_buffer_uses.py from vk.xml. Do not edit: change the generator.\n"
    header = [banner, "#pragma once\n", "#include <vulkan/vulkan.h>\n\n", "#include <string_view>\n\n",
              "namespace slipstream {\n", "struct DeviceState;\n",
              "namespace buffer_use {\n\n",
              "// One resolver per device-level command that can name a VkBuffer or VkDeviceMemory.\n",
              "// Called (while the device has pending binds or moved memory) before the command goes down.\n"]
    generic = [banner, '#include "buffer_uses.h"\n', '#include "memory/readback_buffer_uses.h"\n\n',
               "namespace slipstream::buffer_use {\n\n"]
    inl = [banner,
           "// Included by layer/buffer_use_intercepts.cpp: wrappers for the device commands that name\n",
           "// buffers or memory and have no other hook.\n\n"]
    names = []
    counts = {"direct": 0, "nested": 0, "opaque": 0}
    for name, (cmd, protect, how, lens) in found.items():
        fn = name[2:]
        counts[how] += 1
        params = ", ".join(cmd["params"])
        decl = f"void {fn}(DeviceState& d, {params});\n"
        header.append(f"#ifdef {protect}\n{decl}#endif\n" if protect else decl)
        if name not in precise and name not in manual:
            body, used = [], set()
            for text, arg in zip(cmd["params"], cmd["args"]):
                t, ptr, _ = parse_param(text, arg)
                if t not in TRACKED:
                    continue
                kind = "buffer" if t == "VkBuffer" else "memory"
                used.add(arg)
                if not ptr:
                    body.append(f"    keep_{kind}(d, {arg}, \"{name}\");\n")
                    continue
                count = lens.get(arg)
                if not count or not count.isidentifier():
                    body.append(f"    keep_all(d, \"{name}\");\n")
                    continue
                used.add(count)
                body.append(f"    if ({arg})\n        for (uint32_t i = 0; i < {count}; ++i) keep_{kind}(d, {arg}[i], \"{name}\");\n")
            if how == "nested":
                body.append(f"    keep_all(d, \"{name}\");  // a structure parameter may name more\n")
            voids = "".join(f"    (void){a};\n" for a in cmd["args"] if a not in used)
            text = f"void {fn}(DeviceState& d, {params}) {{\n{voids}{''.join(body)}}}\n"
            generic.append(f"#ifdef {protect}\n{text}#endif\n" if protect else text)
        if name.startswith("vkCmd") or name in manual:
            continue
        ret = cmd["ret"]
        args = ", ".join(cmd["args"])
        first = cmd["args"][0]
        w = (f"static VKAPI_ATTR {ret} VKAPI_CALL {fn}({params}) {{\n"
             f"    slipstream::DeviceState* d = slipstream::find_device({first});\n"
             f"    if (d->buffer_watch.load(std::memory_order_relaxed)) slipstream::buffer_use::{fn}(*d, {args});\n"
             f"    {'return ' if ret != 'void' else ''}d->dispatch.{fn}({args});\n}}\n")
        inl.append(f"#ifdef {protect}\n{w}#endif\n" if protect else w)
        names.append((name, fn, protect))
    header.append("\n}  // namespace buffer_use\n\n")
    all_names = sorted(set(commands) | set(aliases))
    header.append("// Every command name of the registry (aliases too), sorted: a name not here is newer\n"
                  "// than Slipstream's vk.xml.\n")
    header.append("inline constexpr std::string_view kKnownCommands[] = {\n")
    header += [f'    "{n}",\n' for n in all_names]
    header.append("};\n\n}  // namespace slipstream\n")
    generic.append("\n}  // namespace slipstream::buffer_use\n")
    inl.append("\n// Every generated wrapper, by name, for vkGetDeviceProcAddr.\n")
    inl.append("static const struct { const char* name; PFN_vkVoidFunction fn; } kBufferUseIntercepts[] = {\n")
    for name, fn, protect in names:
        line = f'    {{"{name}", reinterpret_cast<PFN_vkVoidFunction>({fn})}},\n'
        inl.append(f"#ifdef {protect}\n{line}#endif\n" if protect else line)
    inl.append("};\n")
    for fname, text in (("buffer_uses.h", header), ("buffer_uses_generic.cpp", generic),
                        ("buffer_use_intercepts.inl", inl)):
        with open(os.path.join(opts.out_dir, fname), "w") as f:
            f.write("".join(text))
    vkcmd = sum(1 for n in found if n.startswith("vkCmd"))
    print(f"gen_buffer_uses.py: {len(found)} commands name a buffer or memory ({vkcmd} vkCmd*; "
          f"{counts['direct']} only through parameters, {counts['nested']} through structures, "
          f"{counts['opaque']} through template data); "
          f"{len(precise)} resolved by hand-written policy, {len(names)} wrapped, {len(manual)} hooked by hand")


def buffer_commands(registry):
    """The vkCmd* names that can name a buffer or memory (for gen_commands.py)."""
    found, _, _, _ = commands_naming_buffers(registry)
    return {n for n in found if n.startswith("vkCmd")}


if __name__ == "__main__":
    main()
