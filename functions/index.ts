// The app's entry point: importing a function file registers it (app.http / app.storageQueue / app.timer).
import './healthz';
import './inventory-list';
import './inventory-upsert';
import './inventory-delete';
import './auth-nonce';
import './auth-login';
import './auth-logout';
import './auth-me';
import './keys-create';
import './keys-list';
import './keys-revoke';
import './shop-config-get';
import './shop-config-update';
import './pricing-config-get';
import './pricing-config-update';
import './site-config';
import './tax-catalog';
