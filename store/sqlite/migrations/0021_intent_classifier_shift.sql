-- 0021: a community's own shift of Deliberate Tool Mode's learned-stage
-- thresholds (store.IntentSettings.ClassifierShift), in hundredths:
-- positive opens less. NULL, every community stored before, takes the
-- deployment's intent.classifier_shift.
ALTER TABLE intent_settings
    ADD COLUMN classifier_shift INTEGER CHECK (classifier_shift BETWEEN -50 AND 50);
