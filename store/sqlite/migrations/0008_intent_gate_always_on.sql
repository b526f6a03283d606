-- 0008: an organisation's opt-in to Deliberate Tool Mode gating the
-- always-on helpers too (clarifying question, suggestions, calculator,
-- read_tool_result, read_transcript). 0, the default for every community
-- stored before, keeps them declared on every turn under the mode.
ALTER TABLE intent_settings
    ADD COLUMN gate_always_on INTEGER NOT NULL DEFAULT 0 CHECK (gate_always_on IN (0, 1));
