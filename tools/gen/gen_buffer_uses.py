#!/usr/bin/env python3
"""Generates, from vk.xml, the list of Vulkan commands that can name a VkBuffer or a
VkDeviceMemory, and the code that makes each of them resolve deferred binds first.

Cached readback defers the binds of buffers into memory whose use is not known yet
(src/memory/memory/readback_deferral.h). Before any command that can name such a buffer (or its memory)
reaches the driver, the deferral must decide where the buffer lives and bind it; otherwise the
driver would see an unbound buffer. vk_registry.py finds every such command in the registry
(Registry.buffer_uses): a parameter of type VkBuffer or VkDeviceMemory, an array of them, or a
structure that holds one (directly, in a member structure, or in any structure vk.xml lets
extend it through pNext, recursively).

Outputs (into --out-dir):
  buffer_uses.h           declarations, in slipstream::buffer_use, of one resolver per such
                          device-level command, `void <Fn>(DeviceState&, <its parameters>)`;
                          kKnownCommands (every command name of the registry, aliases too,
                          sorted) for is_known_command().
  buffer_uses_generic.cpp the resolvers of every command without a hand-written one: they resolve
                          "keep" exactly the buffers and memory the command names as parameters,
                          and every pending bind of the device when it may name more inside a
                          structure (the conservative answer).
  buffer_use_intercepts.inl  pass-through wrappers for the commands that are neither vkCmd*
                          (gen_commands.py puts the call into those) nor hooked by hand
                          (hand-written hooks in layer/ call the resolver or do better), with a
                          name -> function table for vkGetDeviceProcAddr.
From --hooks (layer/hooks.txt):
  resolvers  commands whose resolvers src/ writes by hand (readback_buffer_uses.cpp): the uses
             that tell readback staging from everything else; the commands whose buffers hide
             in template data must be among them.
  hooks      the hooks of commands that can name a buffer, each with a 'buffers:' reason that
             says why it needs no generated wrapper.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vk_registry  # noqa: E402
from vk_registry import BUFFER_HANDLES, param_type  # noqa: E402


def main():
    opts = vk_registry.arguments(__doc__, hooks=True)
    registry = vk_registry.Registry(opts.registry)
    found = registry.buffer_uses()
    entries = vk_registry.read_hooks(opts.hooks, registry, "gen_buffer_uses.py")
    precise = vk_registry.hooks_of(entries, "resolver")
    manual = {n for n in vk_registry.hooks_of(entries) if n in found}
    opaque_generic = sorted(n for n, how in found.items() if how == "opaque" and n not in precise)
    if opaque_generic:
        vk_registry.fail("gen_buffer_uses.py", f"commands with template data need a hand-written resolver "
                         f"(a 'resolvers' entry in {opts.hooks}): {opaque_generic}")

    banner = vk_registry.banner("gen_buffer_uses.py")
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
    for name, how in found.items():
        cmd, protect, lens = registry.command(name), registry.present[name], registry.lens[registry.base(name)]
        fn = name[2:]
        counts[how] += 1
        params = cmd["param_list"]
        decl = f"void {fn}(DeviceState& d, {params});\n"
        header.append(vk_registry.guard(decl, protect))
        if name not in precise and name not in manual:
            body, used = [], set()
            for text, arg in zip(cmd["params"], cmd["args"]):
                t, ptr = param_type(text), "*" in text or "[" in text
                if t not in BUFFER_HANDLES:
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
            generic.append(vk_registry.guard(f"void {fn}(DeviceState& d, {params}) {{\n{voids}{''.join(body)}}}\n",
                                             protect))
        if name.startswith("vkCmd") or name in manual:
            continue
        ret = cmd["ret"]
        args = cmd["arg_list"]
        first = cmd["args"][0]
        w = (f"static VKAPI_ATTR {ret} VKAPI_CALL {fn}({params}) {{\n"
             f"    slipstream::DeviceState* d = slipstream::find_device({first});\n"
             f"    if (d->buffer_watch.load(std::memory_order_relaxed)) slipstream::buffer_use::{fn}(*d, {args});\n"
             f"    {'return ' if ret != 'void' else ''}d->dispatch.{fn}({args});\n}}\n")
        inl.append(vk_registry.guard(w, protect))
        names.append((name, fn, protect))
    header.append("\n}  // namespace buffer_use\n\n")
    all_names = sorted(set(registry.commands) | set(registry.aliases))
    header.append("// Every command name of the registry (aliases too), sorted: a name not here is newer\n"
                  "// than Slipstream's vk.xml.\n")
    header.append("inline constexpr std::string_view kKnownCommands[] = {\n")
    header += [f'    "{n}",\n' for n in all_names]
    header.append("};\n\n}  // namespace slipstream\n")
    generic.append("\n}  // namespace slipstream::buffer_use\n")
    inl.append("\n// Every generated wrapper, by name, for vkGetDeviceProcAddr.\n")
    inl.append("static const struct { const char* name; PFN_vkVoidFunction fn; } kBufferUseIntercepts[] = {\n")
    inl += vk_registry.proc_table(names)
    inl.append("};\n")
    vk_registry.write(opts.out_dir, "buffer_uses.h", header)
    vk_registry.write(opts.out_dir, "buffer_uses_generic.cpp", generic)
    vk_registry.write(opts.out_dir, "buffer_use_intercepts.inl", inl)
    vkcmd = sum(1 for n in found if n.startswith("vkCmd"))
    print(f"gen_buffer_uses.py: {len(found)} commands name a buffer or memory ({vkcmd} vkCmd*; "
          f"{counts['direct']} only through parameters, {counts['nested']} through structures, "
          f"{counts['opaque']} through template data); "
          f"{len(precise)} resolved by hand-written policy, {len(names)} wrapped, {len(manual)} hooked by hand")


if __name__ == "__main__":
    main()
