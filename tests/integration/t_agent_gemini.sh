#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real agent CLI: gemini-cli (pinned, `make agents`) against the mock model,
# through lgrun's LLM proxy (agent_shell_tests in lib.sh): bare, it runs the
# same `ls d` five times with its run_shell_command tool; under lgrun a benign
# session runs to its end, and the same-command loop is stopped. Skips when
# the CLI is not installed.
source "$(dirname "$0")/lib.sh"
need_agent gemini
agent_shell_tests gemini run_shell_command
pass
