import { app } from '@azure/functions';
import { checkAtStart } from '../shared/composition';

// A worker whose configuration or chain is wrong fails its start with every problem listed, before it serves.
app.hook.appStart(() => checkAtStart());
