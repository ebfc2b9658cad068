#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real agent CLI: Codex (pinned, `make agents`) against the mock model,
# through lgrun's LLM proxy (agent_shell_tests in lib.sh): bare, it runs the
# same `ls d` five times with its exec_command tool; under lgrun a benign
# session runs to its end, and the same-command loop is stopped. Skips when
# the CLI is not installed.
source "$(dirname "$0")/lib.sh"
need_agent codex
agent_shell_tests codex exec_command
pass
