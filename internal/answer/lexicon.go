package answer

// The built-in vocabulary: values every scene shares (colours, positions, sizes, common
// states), number words, and the cue words that set a claim's stance. A scene adds its own
// objects and values through the Scope. Each list names English and Chinese spellings; the
// first spelling of a value is its canonical form only when no key is given.

// Attribute names the reader uses for the built-in values. A scene's own attributes keep the
// names the scene gives them.
const (
	Color    = "color"
	Count    = "count"
	Position = "position"
	Size     = "size"
	State    = "state"
)

// builtinValue is one value of the built-in vocabulary with its spellings.
type builtinValue struct {
	attr, key string
	words     []string
}

var builtinValues = []builtinValue{
	{Color, "red", []string{"red", "红色", "红"}},
	{Color, "blue", []string{"blue", "蓝色", "蓝"}},
	{Color, "green", []string{"green", "绿色", "绿"}},
	{Color, "yellow", []string{"yellow", "黄色", "黄"}},
	{Color, "black", []string{"black", "黑色", "黑"}},
	{Color, "white", []string{"white", "白色", "白"}},
	{Color, "grey", []string{"grey", "gray", "灰色", "灰"}},
	{Color, "brown", []string{"brown", "棕色", "褐色", "咖啡色", "棕"}},
	{Color, "orange", []string{"orange", "橙色", "橘色", "橙"}},
	{Color, "pink", []string{"pink", "粉色", "粉红色", "粉红"}},
	{Color, "purple", []string{"purple", "violet", "紫色", "紫"}},
	{Color, "silver", []string{"silver", "银色"}},
	{Color, "gold", []string{"gold", "golden", "金色"}},
	{Color, "beige", []string{"beige", "米色"}},
	{Position, "left", []string{"left", "on the left", "left side", "左边", "左侧", "左面", "左"}},
	{Position, "right", []string{"right", "on the right", "right side", "右边", "右侧", "右面", "右"}},
	{Position, "top", []string{"top", "upper", "above", "上方", "上面", "顶部"}},
	{Position, "bottom", []string{"bottom", "lower", "below", "下方", "下面", "底部"}},
	{Position, "center", []string{"center", "centre", "middle", "中间", "中央"}},
	{Position, "front", []string{"in front", "front", "前面", "前方"}},
	{Position, "behind", []string{"behind", "back", "后面", "后方"}},
	{Position, "top left", []string{"top left", "upper left", "top-left", "左上角", "左上"}},
	{Position, "top right", []string{"top right", "upper right", "top-right", "右上角", "右上"}},
	{Position, "bottom left", []string{"bottom left", "lower left", "bottom-left", "左下角", "左下"}},
	{Position, "bottom right", []string{"bottom right", "lower right", "bottom-right", "右下角", "右下"}},
	{Size, "large", []string{"large", "big", "huge", "大"}},
	{Size, "small", []string{"small", "little", "tiny", "小"}},
	{Size, "tall", []string{"tall", "高"}},
	{Size, "short", []string{"short", "矮"}},
	{State, "open", []string{"open", "opened", "打开", "开着"}},
	{State, "closed", []string{"closed", "shut", "关着", "关闭", "关上"}},
	{State, "on", []string{"switched on", "turned on", "亮着"}},
	{State, "off", []string{"switched off", "turned off", "灭着"}},
	{State, "standing", []string{"standing", "stands", "站着", "站"}},
	{State, "sitting", []string{"sitting", "sits", "seated", "坐着", "坐"}},
	{State, "lying", []string{"lying", "lies", "lying down", "躺着", "趴着", "躺"}},
	{State, "walking", []string{"walking", "walks", "走路", "行走"}},
	{State, "running", []string{"running", "runs", "跑步", "奔跑"}},
	{State, "parked", []string{"parked", "停着", "停放"}},
	{State, "moving", []string{"moving", "driving", "行驶"}},
	{State, "empty", []string{"empty", "空的", "空"}},
	{State, "full", []string{"full", "满的", "满"}},
	{State, "wet", []string{"wet", "湿"}},
	{State, "dry", []string{"dry", "干"}},
	{State, "folded", []string{"folded", "收起", "收着", "合上"}},
}

// English number words (counts). "one" is a count only before a noun (see read.go).
var enNumbers = map[string]int{
	"zero": 0, "no": -1, "one": 1, "a single": 1, "two": 2, "a pair of": 2, "a couple of": 2, "three": 3,
	"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "a dozen": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
	"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
	"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
}

// zhMeasure are the Chinese measure words a numeral must come with to be a count.
const zhMeasure = "个只张把辆头条位本块台件双棵朵匹杯瓶盘碗根支枝颗片间座栋艘架部名人盏扇面层排口串束套顶副幅尾处"

// ordinals name an image by its place.
var ordinals = map[string]int{
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
}

var imageWords = []string{"image", "picture", "photo", "img", "pic", "frame"}

// cue is a class of words that sets a stance or shapes a clause.
type cue uint8

const (
	cueNone      cue = iota
	cueNegation      // not, 不
	cueHedge         // might, 可能
	cueUncertain     // not sure, 不确定 (the whole sentence)
	cueAttrib        // people often assume, 你说
	cueRetract       // just kidding, 说错了 (every earlier claim)
	cueContrast      // but, 但是: starts a clause, ends an attribution
	cueOr            // or, 或: joins alternatives
	cueQuestion      // whether, 吗
	cueCopula        // is, 是
	cuePrep          // next to, of, on: what follows is not the subject
	cuePronoun       // it, they, 它: the last subject again
	cueTotal         // in total, 一共: the count after it is the sum
	cueDet           // the, a: a noun phrase starts
	cuePast          // was, were, 原来: a state before the present one
)

// cueWords are the phrases of each cue class, English then Chinese, matched as whole words in
// English and as character runs in Chinese.
var cueWords = map[cue][]string{
	cueNegation: {"not", "no", "never", "nobody", "none", "neither", "nor", "nothing", "isn't", "aren't",
		"wasn't", "weren't", "doesn't", "don't", "didn't", "can't", "cannot", "without", "no longer",
		"不是", "并不", "并非", "没有", "没", "不", "无", "未"},
	cueHedge: {"might", "may", "maybe", "perhaps", "probably", "possibly", "likely", "seems", "seem",
		"seemingly", "appears to be", "appears", "looks like", "i think", "i guess", "i believe", "could be",
		"presumably", "可能", "也许", "大概", "似乎", "好像", "或许", "估计", "应该是", "看起来像", "大约"},
	cueUncertain: {"not sure", "unsure", "can't tell", "cannot tell", "can't be sure", "hard to say",
		"hard to tell", "unclear", "need to check", "needs to be checked", "need to verify", "don't know",
		"do not know", "not certain", "uncertain", "no way to know", "不确定", "看不清", "无法确定",
		"不知道", "需要确认", "需要核实", "不清楚", "难以判断", "说不准", "无法判断"},
	cueAttrib: {"people often assume", "people assume", "people often think", "people think",
		"many people think", "some people think", "some say", "some might say", "is often assumed",
		"it is often assumed", "commonly assumed", "commonly believed", "you said", "you mentioned",
		"you claimed", "according to you", "you think", "you suggested", "one might think",
		"it might seem", "at first glance", "有人认为", "有人说", "人们常以为", "人们通常认为",
		"人们以为", "很多人以为", "你说", "你提到", "你认为", "乍一看"},
	cueRetract: {"just kidding", "kidding", "i was wrong", "i'm wrong", "scratch that", "no wait",
		"wait, no", "i take that back", "correction", "let me correct", "on second thought",
		"i misspoke", "that's wrong", "that was wrong", "no, actually", "actually no",
		"开玩笑", "开个玩笑", "说错了", "我错了", "更正", "纠正一下", "不对", "收回"},
	cueContrast: {"but", "however", "though", "although", "whereas", "while", "instead", "rather",
		"但是", "但", "不过", "然而", "而是", "可是", "其实",
		// Agreeing with the user ("you're right") turns to what follows as the answer; the
		// longer phrase keeps "你说" (attribution) from taking it.
		"你说得对", "你说的对", "你说得没错", "你说的没错"},
	cueOr:       {"or", "either", "or maybe", "或者", "或", "还是"},
	cueQuestion: {"whether", "是否", "吗", "么"},
	cueCopula: {"is", "are", "was", "were", "looks", "look", "appears", "remains", "remain", "becomes",
		"'s", "is now", "are now", "has", "have", "是", "为", "呈", "有"},
	cuePrep: {"next to", "beside", "near", "by", "of", "on", "in", "at", "under", "above", "behind",
		"with", "from", "in front of", "on top of", "to the left of", "to the right of", "left of",
		"right of", "between", "among", "inside", "outside", "against", "along", "across", "into", "onto",
		"在", "旁边的", "上的", "里的", "边的"},
	cuePronoun: {"it", "they", "its", "their", "them", "this", "that", "these", "those", "它", "它们", "他", "她", "他们", "她们", "这", "那"},
	cueTotal:   {"in total", "total", "altogether", "all together", "in all", "so there are", "一共", "总共", "合计", "共有", "加起来"},
	cuePast:    {"was", "were", "used to be", "had been", "at first", "originally", "before", "earlier", "原来", "本来", "之前", "起初", "一开始", "刚才", "原为", "原本", "以前", "先前"},
	cueDet:     {"the", "a", "an", "this", "that", "these", "those", "another", "each", "every"},
}

// fnWords end an unknown English noun phrase: what follows a determiner up to one of these
// is the noun ("the lawn mower is green" → "lawn mower").
var fnWords = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "has": true, "have": true,
	"had": true, "and": true, "or": true, "but": true, "of": true, "on": true, "in": true, "at": true,
	"to": true, "with": true, "from": true, "by": true, "near": true, "next": true, "under": true,
	"above": true, "behind": true, "that": true, "which": true, "who": true, "as": true, "than": true,
	"it": true, "they": true, "not": true, "no": true, "looks": true, "appears": true, "seems": true,
	"can": true, "could": true, "might": true, "may": true, "will": true, "would": true, "should": true,
	"there": true, "here": true, "so": true, "because": true, "since": true, "for": true, "if": true,
	"while": true, "where": true, "when": true, "also": true, "still": true, "now": true, "just": true,
	"clearly": true, "really": true, "very": true, "i": true, "you": true, "we": true, "he": true, "she": true,
	"the": true, "a": true, "an": true, "this": true, "these": true, "those": true, "its": true, "their": true,
	"does": true, "do": true, "did": true, "into": true, "onto": true, "between": true, "beside": true,
	"remains": true, "left": true, "right": true, "other": true, "total": true, "all": true,
	"image": true, "picture": true, "photo": true, "color": true, "colour": true, "number": true,
	"'s": true, "more": true, "some": true, "many": true, "several": true, "both": true, "each": true, "every": true, "any": true,
}

// attrNouns name an attribute: "the colour of the cup" is about the cup.
var attrNouns = map[string]string{
	"color": Color, "colour": Color, "number": Count, "count": Count, "position": Position,
	"size": Size, "state": State, "颜色": Color, "数量": Count, "位置": Position, "大小": Size, "状态": State,
}
