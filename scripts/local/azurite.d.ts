// Azurite ships no typings for its internal modules; the local stack loads three of them.
declare module 'azurite/dist/src/queue/QueueConfiguration.js';
declare module 'azurite/dist/src/queue/QueueServer.js';
declare module 'azurite/dist/src/queue/utils/constants.js';
