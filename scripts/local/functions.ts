// Loads every function file so its handler is registered for the local host. Outside the Functions
// host `app.http` only warns that it registers nothing; those warnings are muted while loading.
import './mute-registration-warnings';
import '../../functions/index';
import { restoreWarnings } from './mute-registration-warnings';

restoreWarnings();
