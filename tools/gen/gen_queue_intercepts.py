#!/usr/bin/env python3
"""Generates the wrappers that serialize every VkQueue function with fusion's use of the queue.

While fusion is on, Slipstream's flusher thread submits to the application's queues, so every
function of vk.xml that takes a VkQueue first must hold the queue's lock, with the open batch
flushed first (its work comes before whatever the function does on the queue: a label, a
checkpoint query, a performance configuration). The functions layer/ hooks by hand (layer/hooks.txt,
--hooks, each with a 'queue:' reason that says how it serializes instead) get no wrapper.

Output (into --out-dir): queue_intercepts.inl, one wrapper per function and the table
kGeneratedQueueIntercepts (name, function) that layer/queue_intercepts.cpp hands to
vkGetDeviceProcAddr.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vk_registry  # noqa: E402


def main():
    opts = vk_registry.arguments(__doc__, hooks=True)
    registry = vk_registry.Registry(opts.registry)
    hooks = vk_registry.hooks_of(vk_registry.read_hooks(opts.hooks, registry, "gen_queue_intercepts.py"))
    queue_functions = [(name, cmd, protect) for name, cmd, protect in registry.declared()
                       if registry.first_type(name) == "VkQueue"]
    manual = {name for name, _, _ in queue_functions if name in hooks}

    out = [vk_registry.banner("gen_queue_intercepts.py"),
           "// Each VkQueue function runs with the queue's fusion lock held and its open batch flushed.\n\n"]
    table = []
    for name, cmd, protect in queue_functions:
        if name in manual:
            continue
        fn = name[2:]
        queue = cmd["args"][0]
        body = [f"static VKAPI_ATTR {cmd['ret']} VKAPI_CALL {fn}({cmd['param_list']}) {{\n",
                f"    submit::FlushedQueue flushed(find_queue({queue}), submit::FlushReason::PassThrough);\n"]
        if cmd["ret"] == "VkResult":
            body.append("    if (flushed.error() < 0) return flushed.error();\n")
        ret = "" if cmd["ret"] == "void" else "return "
        body.append(f"    {ret}find_device({queue})->dispatch.{fn}({cmd['arg_list']});\n}}\n")
        out += [vk_registry.guard("".join(body), protect), "\n"]
        table.append((name, fn, protect))
    out.append("struct GeneratedQueueIntercept {\n    const char* name;\n    PFN_vkVoidFunction fn;\n};\n")
    out.append("inline const GeneratedQueueIntercept kGeneratedQueueIntercepts[] = {\n")
    out += vk_registry.proc_table(table)
    out.append("    {nullptr, nullptr},\n};\n")
    vk_registry.write(opts.out_dir, "queue_intercepts.inl", out)
    print(f"gen_queue_intercepts.py: {len(queue_functions)} VkQueue functions, "
          f"{len(queue_functions) - len(manual)} wrapped, {len(manual)} by hand")


if __name__ == "__main__":
    main()
