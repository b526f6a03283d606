-- 0024: each owner's memory generation (store.VectorCache): a random
-- number every change of their memories rewrites, in the change's
-- transaction, so that a process keeping their vectors in memory knows,
-- by reading one row, whether any process changed them since. Derived:
-- an import writes one for every owner it brings. owner_id '' is the
-- organisation's shared memories. Every owner holding memories now gets
-- one, so that their vectors are cached from the first search.
CREATE TABLE memory_generations (
    org_id   TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    gen      INTEGER NOT NULL CHECK (gen > 0),
    PRIMARY KEY (org_id, owner_id)
);

INSERT INTO memory_generations (org_id, owner_id, gen)
    SELECT DISTINCT org_id, owner_id, (random() & 4611686018427387903) + 1 FROM memories;
