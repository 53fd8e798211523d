// Interception of every vkCmd*: records what kind of work each command is in its command
// buffer's state, captures it while the command buffer has a capture (VK_SLIPSTREAM_FUSE),
// then calls down. The wrappers are generated from vk.xml; vkCmdExecuteCommands is hooked by
// hand (layer/hooks.txt).
#include "buffer_uses.h"
#include "submit/capture_control.h"
#include "capture_commands.h"
#include "hooks.h"
#include "state/object_state.h"

#include <vector>

namespace slipstream::hooks {

namespace {
inline CommandBufferState& record_command(VkCommandBuffer cb, CommandId id) {
    CommandBufferState* state = find_command_buffer(cb);
    state->record(id);
    if (state->capture) capture::stop_if_batch_sized(*state);
    return *state;
}
}  // namespace

#define SLIPSTREAM_RECORD(cb, id) record_command(cb, id)
#include "cmd_intercepts.inl"
#undef SLIPSTREAM_RECORD

VKAPI_ATTR void VKAPI_CALL CmdExecuteCommands(VkCommandBuffer cb, uint32_t count, const VkCommandBuffer* secondaries) {
    CommandBufferState* state = find_command_buffer(cb);
    state->record(CommandId::CmdExecuteCommands);
    if (state->capture) state->capture->stop(CommandId::CmdExecuteCommands);  // FUSION.md rule 7
    for (uint32_t i = 0; i < count; ++i)
        if (const CommandBufferState* secondary = find_command_buffer(secondaries[i])) state->include(*secondary);
    if (state->lazy) return;  // its native begin failed (capture_control.h): the driver never began it
    state->device->dispatch.CmdExecuteCommands(cb, count, secondaries);
}

const NamedProc* command_intercepts(size_t* count) {
    static const std::vector<NamedProc> all = [] {
        std::vector<NamedProc> v;
        for (const auto& entry : kGeneratedCommandIntercepts) v.push_back({entry.name, entry.fn});
        return v;
    }();
    *count = all.size();
    return all.data();
}

}  // namespace slipstream::hooks
