#!/usr/bin/env python3
"""Generates the functions that fill Slipstream's dispatch tables from vk.xml.

Output (into --out-dir): dispatch_init.inl, with
  init_instance_dispatch(instance, table, gipa) and init_device_dispatch(device, table, gdpa)
which fill the validation layers' VkLayerInstanceDispatchTable / VkLayerDispatchTable with
what the next layer really returns for every command of the registry, and null where it
returns null.

Device commands of instance extensions (VK_EXT_debug_utils' vkCmdBeginDebugUtilsLabelEXT and
the rest) are asked of the instance chain too, where the device chain returns null: Debian 12's
loader (1.3.239) fills its own device table with them through the layers' vkGetInstanceProcAddr,
and its device terminator returns null for them where the driver lacks them (lavapipe), while
its instance terminator has them. An application then reaches the layer's intercept, which must
call what the loader would have called (FFmpeg's libplacebo filter crashed on a null here).

Why not the utility library's layer_init_*_dispatch_table: they replace every function the
next layer did not return with a stub that returns VK_SUCCESS and writes nothing, so a null
check can no longer tell "absent" (choose the KHR alias, or skip the feature) from "present".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vk_registry  # noqa: E402

# The tables hold the proc-address function they were filled from.
SELF = {"vkGetInstanceProcAddr", "vkGetDeviceProcAddr"}


def main():
    opts = vk_registry.arguments(__doc__)
    registry = vk_registry.Registry(opts.registry)
    levels = {"global": [], "instance": [], "device": []}
    instance_only = registry.of_instance_extensions()
    for name, _, protect in registry.declared():
        if name not in SELF:
            levels[registry.level(name)].append((name, protect))

    out = [vk_registry.banner("gen_dispatch.py"), "// Null where the next layer returns null: never a stub.\n\n"]

    def body(level, handle, gpa):
        return [vk_registry.guard(f'    table->{name[2:]} = reinterpret_cast<PFN_{name}>(gpa({handle}, "{name}"));\n',
                                  protect) for name, protect in levels[level]]

    out += ["inline void init_instance_dispatch(VkInstance instance, VkLayerInstanceDispatchTable* table,\n",
            "                                   PFN_vkGetInstanceProcAddr gpa) {\n",
            "    *table = VkLayerInstanceDispatchTable{};\n",
            "    table->GetInstanceProcAddr = gpa;\n",
            "    table->GetPhysicalDeviceProcAddr =\n",
            '        reinterpret_cast<PFN_GetPhysicalDeviceProcAddr>(gpa(instance, "vk_layerGetPhysicalDeviceProcAddr"));\n']
    out += body("instance", "instance", "gpa")
    out += ["}\n\n",
            "inline void init_device_dispatch(VkDevice device, VkLayerDispatchTable* table, PFN_vkGetDeviceProcAddr gpa,\n",
            "                                 VkInstance instance, PFN_vkGetInstanceProcAddr gipa) {\n",
            "    *table = VkLayerDispatchTable{};\n",
            "    table->GetDeviceProcAddr = gpa;\n"]
    out += body("device", "device", "gpa")
    out += ["    // Device commands of instance extensions: the instance chain's where the device's has none.\n"]
    out += [vk_registry.guard(f'    if (!table->{name[2:]})\n        table->{name[2:]} = '
                              f'reinterpret_cast<PFN_{name}>(gipa(instance, "{name}"));\n', protect)
            for name, protect in levels["device"] if name in instance_only]
    out += ["}\n"]
    vk_registry.write(opts.out_dir, "dispatch_init.inl", out)
    print(f"gen_dispatch.py: {len(levels['instance'])} instance-level and "
          f"{len(levels['device'])} device-level commands")


if __name__ == "__main__":
    main()
