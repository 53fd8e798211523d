// The generated command table's entry for a command name, or null (unit tests only).
#pragma once

#include "command_table.h"

#include <cstring>

namespace slipstream {
inline const CommandInfo* command_info(const char* name) {
    for (const CommandInfo& c : kCommandInfo)
        if (std::strcmp(c.name, name) == 0) return &c;
    return nullptr;
}
}  // namespace slipstream
