#!/usr/bin/env python3
"""Generates, from layer/hooks.txt and vk.xml, what names each hand-written hook: its
declaration and its row in the table vkGetInstanceProcAddr and vkGetDeviceProcAddr hand out.

Outputs (into --out-dir):
  hook_decls.h    the declaration of every hook, in slipstream::hooks, with vk.xml's return
                  and parameter types, under the #ifdef the C headers declare its command
                  under (layer/hooks.h includes it). There is no default body: a listed hook
                  whose body is missing fails to link, for hook_table.inl takes its address.
  hook_table.inl  kInstanceHooks (global and instance-level commands: vkGetInstanceProcAddr
                  hands them out with or without an instance) and kDeviceHooks (commands whose
                  first parameter is a VkDevice, VkQueue or VkCommandBuffer: handed out where the
                  chain below has the command), as NamedProc rows (layer/layer.cpp includes it).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vk_registry  # noqa: E402


def main():
    opts = vk_registry.arguments(__doc__, hooks=True)
    registry = vk_registry.Registry(opts.registry)
    hooks = vk_registry.hooks_of(vk_registry.read_hooks(opts.hooks, registry, "gen_hooks.py")).values()
    banner = vk_registry.banner("gen_hooks.py")

    decls = [banner, "// The Vulkan commands Slipstream hooks by hand (layer/hooks.txt); layer/hooks.h includes it.\n",
             "#pragma once\n\n", "#include <vulkan/vulkan.h>\n\n", "namespace slipstream::hooks {\n"]
    file = None
    for h in hooks:
        if h.file != file:
            file = h.file
            decls.append(f"\n// {file}\n")
        cmd = registry.command(h.name)
        decls.append(vk_registry.guard(f"VKAPI_ATTR {cmd['ret']} VKAPI_CALL {h.fn}({cmd['param_list']});\n",
                                       registry.present[h.name]))
    decls.append("\n}  // namespace slipstream::hooks\n")

    levels = {"instance": [], "device": []}
    for h in hooks:
        level = "device" if registry.level(h.name) == "device" else "instance"
        levels[level].append((h.name, h.fn, registry.present[h.name]))
    table = [banner, "// Included by layer/layer.cpp: every hook of layer/hooks.txt, by name.\n\n",
             "// Global and instance-level: vkGetInstanceProcAddr hands them out with or without an instance.\n",
             "const NamedProc kInstanceHooks[] = {\n"]
    table += vk_registry.proc_table(levels["instance"])
    table += ["};\n\n",
              "// Device-level: handed out where the chain below has the command.\n",
              "const NamedProc kDeviceHooks[] = {\n"]
    table += vk_registry.proc_table(levels["device"])
    table.append("};\n")
    vk_registry.write(opts.out_dir, "hook_decls.h", decls)
    vk_registry.write(opts.out_dir, "hook_table.inl", table)
    print(f"gen_hooks.py: {len(levels['instance'])} instance-level and {len(levels['device'])} device-level hooks")


if __name__ == "__main__":
    main()
