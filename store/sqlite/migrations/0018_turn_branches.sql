-- 0018: branches of a conversation (store.Branches). Each turn follows
-- its parent turn (NULL for a first message, and for turns of no branch:
-- console runs, MCP sessions); a regenerated answer or an edited message
-- is a turn beside the one it replaces. The conversation's head is the
-- last turn of the branch shown. The turns stored before this migration
-- are linked in order by its Go part (store/sqlite linkTurns), each to
-- the turn before it, and each conversation's head is its last turn.
ALTER TABLE turns ADD COLUMN parent_turn_id TEXT;
ALTER TABLE conversations ADD COLUMN head_turn_id TEXT;
-- '' marks a conversation for linking (see linkTurns), which leaves
-- NULL on one without turns.
UPDATE conversations SET head_turn_id = '';

-- The turns following one parent: the sibling cap and the pager.
CREATE INDEX turns_by_parent ON turns (org_id, conversation_id, parent_turn_id);
