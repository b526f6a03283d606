package fetch

// pdfCorpus is the corpus's documents: one per script, and the two layouts
// that readers most often get wrong (columns and tables). Each text is
// long enough to wrap many lines, and the longer ones run onto a second
// page.
var pdfCorpus = []corpusDoc{
	{name: "english", lang: "en", layout: "flow", paras: []string{
		"Keeping a Lighthouse",
		"For more than two centuries the keepers of the northern coast kept a log of every night on duty. The entries are short: the hour the lamp was lit, the state of the sea, the ships that passed, and the hour the lamp was put out at dawn.",
		"A keeper's first duty was the lens. Soot from the oil lamp dulled the glass within hours, so the lens was polished each morning with a soft cloth and a little spirit, and covered with a linen curtain against the sun, which could otherwise set fire to the wick through the glass.",
		"The clockwork that turned the lens had to be wound every few hours. If it stopped, the light no longer flashed in its own pattern, and a ship's officer could mistake one lighthouse for another, with consequences the keepers did not like to imagine.",
		"Storms brought the busiest nights. Spray reached the gallery on the worst of them, and the keepers took turns at the window, watching for flares, while the one off duty slept in his clothes.",
		"Most lights are automatic now. The logs remain, bound in leather in the county archive, and anyone may read them on request: a quiet record of people who stayed awake so that others could find their way home.",
	}},
	{name: "vietnamese", lang: "vi", layout: "flow", paras: []string{
		"Hướng dẫn sử dụng thư viện",
		"Thư viện mở cửa từ tám giờ sáng đến chín giờ tối, tất cả các ngày trong tuần trừ ngày lễ. Bạn đọc cần mang theo thẻ thư viện còn hiệu lực khi mượn sách hoặc sử dụng phòng đọc.",
		"Mỗi người được mượn tối đa năm cuốn sách trong hai tuần. Nếu cần thêm thời gian, bạn có thể gia hạn một lần trên trang web của thư viện hoặc tại quầy thủ thư, miễn là chưa có người khác đặt trước cuốn sách đó.",
		"Phòng đọc tầng hai dành cho việc học tập yên tĩnh. Xin vui lòng tắt chuông điện thoại, không ăn uống và giữ gìn sách báo cẩn thận. Máy tính công cộng được đặt ở tầng một và có thể sử dụng miễn phí trong một giờ.",
		"Thư viện thường xuyên tổ chức các buổi nói chuyện về văn học, lịch sử và khoa học. Lịch sinh hoạt được cập nhật hằng tháng trên bảng tin ở sảnh chính. Mọi ý kiến đóng góp xin gửi về hộp thư góp ý đặt cạnh cửa ra vào.",
	}},
	{name: "russian", lang: "ru", layout: "flow", paras: []string{
		"Правила пользования библиотекой",
		"Библиотека открыта ежедневно с девяти утра до восьми вечера, кроме праздничных дней. Для получения книг на дом необходимо предъявить читательский билет.",
		"Одновременно можно взять не более пяти книг сроком на две недели. Срок можно продлить один раз, если на книгу нет очереди, по телефону или через сайт библиотеки.",
		"В читальном зале просим соблюдать тишину, не пользоваться телефоном и бережно обращаться с изданиями. Редкие книги выдаются только для работы в зале.",
		"Каждый месяц библиотека проводит встречи с писателями, лекции по истории города и занятия для детей. Расписание вывешивается у входа и публикуется на сайте.",
	}},
	{name: "greek", lang: "el", layout: "flow", paras: []string{
		"Οδηγός για τους επισκέπτες του μουσείου",
		"Το μουσείο είναι ανοιχτό κάθε μέρα από τις εννέα το πρωί έως τις πέντε το απόγευμα. Την πρώτη Κυριακή κάθε μήνα η είσοδος είναι δωρεάν για όλους τους επισκέπτες.",
		"Οι αίθουσες του ισογείου παρουσιάζουν αγγεία και αγάλματα από την αρχαϊκή και την κλασική εποχή. Στον πρώτο όροφο εκτίθενται κοσμήματα, νομίσματα και εργαλεία της καθημερινής ζωής.",
		"Η φωτογράφηση επιτρέπεται χωρίς φλας. Παρακαλούμε να μην αγγίζετε τα εκθέματα και να αφήνετε τις μεγάλες τσάντες στο βεστιάριο, δίπλα στην είσοδο.",
		"Ξεναγήσεις στα ελληνικά και στα αγγλικά γίνονται κάθε Σάββατο. Για ομάδες σχολείων απαιτείται κράτηση τουλάχιστον μία εβδομάδα νωρίτερα.",
	}},
	{name: "japanese", lang: "ja", layout: "flow", paras: []string{
		"図書館の利用案内",
		"図書館は午前九時から午後八時まで開館しています。月曜日と祝日の翌日は休館日です。本を借りるときは、有効な利用者カードをカウンターに提示してください。",
		"一人につき五冊まで、二週間借りることができます。ほかの人の予約が入っていなければ、ホームページまたは電話で一回だけ貸出期間を延長できます。返却が遅れた場合は、しばらくの間、新しい本を借りることができません。",
		"二階の閲覧室は静かに勉強するための場所です。携帯電話はマナーモードにして、飲食はご遠慮ください。貴重な資料は閲覧室の中でのみ利用できます。",
		"毎月、作家の講演会や子ども向けの読み聞かせ会を開いています。予定は入口の掲示板とホームページでお知らせします。ご意見やご要望は、カウンターの横にある投書箱にお寄せください。",
		"地下の書庫には、明治時代から現在までの新聞や雑誌が保存されています。閲覧を希望する方は、前日までに申込書を提出してください。古い資料は傷みやすいので、手袋を着用してページをめくってください。",
	}},
	{name: "chinese", lang: "zh", layout: "flow", paras: []string{
		"图书馆使用指南",
		"图书馆每天上午九点至晚上八点开放，法定节假日除外。借阅图书时，请出示有效的读者证。",
		"每位读者最多可以借阅五本书，借期为两周。如果没有其他读者预约，可以通过网站或电话续借一次。逾期归还的读者在一段时间内不能借阅新书。",
		"二楼阅览室是安静学习的地方。请将手机调至静音，不要在室内饮食。珍贵文献只能在阅览室内阅读，不能带出馆外。",
		"图书馆每月举办作家讲座、历史讲座和儿童故事会。活动安排张贴在大厅的公告栏上，并在网站上公布。欢迎读者把意见和建议投入服务台旁边的意见箱。",
		"地下书库保存着从上世纪初到现在的报纸和杂志。需要查阅的读者请提前一天提交申请。旧资料容易损坏，翻阅时请戴上手套。",
	}},
	{name: "columns", lang: "en", layout: "columns", paras: []string{
		"Notes from the Harbour Office",
		"The harbour office opens at six in the morning, when the first fishing boats come back with the night's catch. The harbour master records each arrival in a ledger: the boat's name, its skipper, the time, and the berth it was given.",
		"By eight the fish market is at its busiest. Buyers from the town's restaurants walk along the tables, and the auctioneer calls prices so fast that only the regulars can follow him. By ten the tables are washed down and empty.",
		"In the afternoon the office turns to the larger ships. A cargo vessel needs a pilot to bring it through the channel, and the pilot boat leaves from the end of the east pier an hour before the ship is due at the harbour mouth.",
		"Weather decides everything. When a gale is forecast, the office raises the warning signal on the mast above the quay, and the smaller boats stay in. The harbour master has the final word, and in thirty years nobody has argued with him twice.",
		"In the evening the ledger is closed, the day's fees are counted, and the lights along the breakwater come on one by one. The office stays dark until six, when the first boat rounds the point again.",
	}},
	{name: "table", lang: "en", layout: "table", paras: []string{
		"City | Country | Population | Founded",
		"Hanoi | Vietnam | 8.4 million | 1010",
		"Kyoto | Japan | 1.46 million | 794",
		"Lisbon | Portugal | 0.55 million | before 1200 BC",
		"Montreal | Canada | 1.76 million | 1642",
		"Nairobi | Kenya | 4.4 million | 1899",
		"Oslo | Norway | 0.71 million | 1040",
		"Quito | Ecuador | 2.8 million | 1534",
		"Valparaíso | Chile | 0.3 million | 1536",
	}},
}
