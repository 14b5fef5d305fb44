struct Mail {
  struct Letter {  // expected-error:10: message 'Mail::Letter' is declared inside 'Mail': messages must be declared at namespace scope
    int words;
  };
};

struct RK_ACTOR Postbox {
  int received;
  RK_HANDLER void on(const Mail::Letter& l, rk::Ctx&) { received += l.words; }  // expected-note: used as a message: handled by 'Postbox::on' here
};
