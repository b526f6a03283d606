-- A tool result that answers a call the agent loop refused to run (past a
-- tool-call limit, or without a name) is marked as such, so that a
-- resumed turn counts the calls it ran without matching the refusal's
-- text. Earlier refusals are recognised by the text they all began with.
ALTER TABLE messages ADD COLUMN refused boolean NOT NULL DEFAULT false;

UPDATE messages SET refused = true
    WHERE role = 'tool' AND substring(content FROM 1 FOR 9) = convert_to('Not run: ', 'UTF8');
