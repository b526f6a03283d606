// Runs before the page is drawn (a classic script in <head>, not a
// module, which would wait): applies the theme stored in this browser so
// the page never flashes the other one. theme.js owns the choice.
(function () {
  var theme = 'system';
  try {
    var stored = localStorage.getItem('quiver.theme');
    if (stored === 'light' || stored === 'dark') theme = stored;
  } catch (e) {
    // storage blocked: follow the system
  }
  document.documentElement.setAttribute('data-theme', theme);
})();
