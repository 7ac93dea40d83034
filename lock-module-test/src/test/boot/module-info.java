/** An application on the module path: it names only the API; the providers come by service binding. */
module dev.tumbler.lock.boot {
  requires dev.tumbler.lock;
}
