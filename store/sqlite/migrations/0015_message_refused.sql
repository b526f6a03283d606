-- A tool result that answers a call the agent loop refused to run (past a
-- tool-call limit, or without a name) is marked as such, so that a
-- resumed turn counts the calls it ran without matching the refusal's
-- text. Earlier refusals are recognised by the text they all began with.
ALTER TABLE messages ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;

UPDATE messages SET refused = 1
    WHERE role = 'tool' AND substr(content, 1, 9) = 'Not run: ';
